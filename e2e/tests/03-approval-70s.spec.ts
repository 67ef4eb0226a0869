// A PG slower than the server's 60 s read timeout: the page checks for its full
// window, says it could not confirm yet, and the order page shows PAID once
// recovery has asked the PG again with the same key.
import { expect, test } from '../support/fixtures';
import { OrderPage, checkout } from '../support/pages';

test.use({ timings: 'real' });

test('a 70-second approval is unresolved after the full window, then paid by recovery', async ({
  page,
  stack,
  confirmPosts,
  states,
}) => {
  test.setTimeout(150_000);
  const confirm = await checkout(page, 'approve_70s');

  await confirm.expectState('checking', 30_000);
  await confirm.expectState('unresolved', 60_000);
  const unresolvedAfter = states.firstAt('unresolved') - confirmPosts.firstAt;
  console.log(`unresolved after ${unresolvedAfter} ms`);
  expect(unresolvedAfter).toBeGreaterThanOrEqual(65_000);
  expect(states.sequence).toEqual(['submitting', 'checking', 'unresolved']);

  await page.getByRole('link', { name: 'See your order' }).click();
  const order = new OrderPage(page);
  // The PG is still processing (it answers at 70 s): the server's read timed out at 60 s.
  await expect(order.status).toHaveAttribute('data-order-status', 'UNKNOWN');
  await expect(order.status).toHaveAttribute('data-order-status', 'PAID', { timeout: 40_000 });
  expect(confirmPosts.count).toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
});
