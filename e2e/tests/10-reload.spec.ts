// A reload while checking finds the attempt stored before the POST left: it
// resumes checking and never sends the POST again.
import { expect, test } from '../support/fixtures';
import { checkout } from '../support/pages';

test.use({ timings: 'real' });

test('a reload during checking resumes checking without a new POST', async ({ page, stack, confirmPosts, states }) => {
  test.setTimeout(90_000);
  page.on('dialog', (dialog) => dialog.accept());
  const confirm = await checkout(page, 'approve_40s');
  await confirm.expectState('checking', 20_000);

  await page.reload();

  await confirm.expectState('checking');
  await confirm.expectState('paid', 35_000);
  expect(states.byPageLoad).toEqual([
    ['submitting', 'checking'],
    ['checking', 'paid'],
  ]);
  expect(confirmPosts.count).toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
});
