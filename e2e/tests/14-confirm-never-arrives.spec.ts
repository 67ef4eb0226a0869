// The confirm POST fails before it reaches the server (the connection drops as
// it is sent). The page does not resend it: it checks, sees that the server never
// received a confirm, and says plainly that nothing was charged.
import { expect, test } from '../support/fixtures';
import { checkout } from '../support/pages';

test('a confirm that never reaches the server ends as not charged, without a resend', async ({
  page,
  stack,
  confirmPosts,
  states,
}) => {
  await page.route('**/api/orders/*/confirm', async (route) => {
    confirmPosts.droppedBeforeServer += 1;
    await route.abort('connectionreset');
  });

  const confirm = await checkout(page, 'approve');

  await confirm.expectState('failed', 20_000);
  await expect(confirm.failureMessage).toContainText('did not receive your payment confirmation');
  await expect(confirm.failureMessage).toContainText('You have not been charged');
  expect(states.sequence).toEqual(['submitting', 'checking', 'failed']);
  expect(confirmPosts.count).toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId] ?? 0).toBe(0);
  const order = await (await page.request.get(`/api/orders/${confirm.orderId}`)).json();
  expect(order.status).toBe('CREATED');
});
