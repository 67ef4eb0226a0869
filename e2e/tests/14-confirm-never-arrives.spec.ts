// The confirm POST fails before it reaches the server (the connection drops as
// it is sent). The page does not resend it: it checks, sees that the server never
// received a confirm, and when its window ends asks the server to close the
// order. The server closes it as failed, and only then does the page say that
// nothing was charged, in the server's words.
import { expect, test } from '../support/fixtures';
import { checkout } from '../support/pages';

test('a confirm that never reaches the server ends as not charged once the server closes the order', async ({
  page,
  stack,
  confirmPosts,
  states,
}) => {
  await page.route('**/api/orders/*/confirm', async (route) => {
    confirmPosts.droppedBeforeServer += 1;
    await route.abort('connectionreset');
  });
  const closing = page.waitForResponse((response) => response.url().endsWith('/abandon'));

  const confirm = await checkout(page, 'approve');

  await confirm.expectState('failed', 20_000);
  const closed = await (await closing).json();
  expect(closed.status, 'the server closed the order').toBe('FAILED');
  await expect(confirm.failureMessage).toHaveText(closed.failure.message);
  await expect(confirm.failureMessage).toContainText('You have not been charged');
  await expect(page.getByText('CONFIRM_NOT_RECEIVED')).toBeVisible();
  expect(states.sequence).toEqual(['submitting', 'checking', 'failed']);
  expect(confirmPosts.count).toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId] ?? 0).toBe(0);
  const order = await (await page.request.get(`/api/orders/${confirm.orderId}`)).json();
  expect(order.status).toBe('FAILED');
  expect(order.failure.code).toBe('CONFIRM_NOT_RECEIVED');
});
