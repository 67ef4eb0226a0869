// The demo in real time: a PG that takes 40 s, a page that waits 15 s and then checks.
import { expect, test } from '../support/fixtures';
import { checkout } from '../support/pages';

test.use({ timings: 'real' });

test('a 40-second approval shows checking at 15 s and paid by 43 s', async ({ page, stack, confirmPosts, states }) => {
  test.setTimeout(90_000);
  const confirm = await checkout(page, 'approve_40s');
  await confirm.expectState('submitting');
  // The elapsed time moves while the page waits (read as a number: each label shows for a second).
  const elapsed = page.getByTestId('elapsed');
  const seconds = async () => Number((await elapsed.textContent())?.match(/^Waiting (\d+) s$/)?.[1] ?? NaN);
  await expect.poll(seconds, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
  await confirm.expectState('submitting');

  await confirm.expectState('checking', 20_000);
  await expect(page.getByTestId('check-count')).toHaveText(/^Check \d+ of 25$/);
  await confirm.expectState('paid', 30_000);

  const sent = confirmPosts.firstAt;
  const checkingAfter = states.firstAt('checking') - sent;
  const paidAfter = states.firstAt('paid') - sent;
  console.log(`checking after ${checkingAfter} ms, paid after ${paidAfter} ms`);
  expect(checkingAfter).toBeGreaterThanOrEqual(15_000);
  expect(checkingAfter).toBeLessThanOrEqual(17_000);
  expect(paidAfter).toBeLessThanOrEqual(43_000);
  expect(states.sequence).toEqual(['submitting', 'checking', 'paid']);
  expect(confirmPosts.count).toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
});
