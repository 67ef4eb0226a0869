import { expect, test } from '../support/fixtures';
import { CartPage, PgWindow, checkout } from '../support/pages';

test('a declined card fails with the reason, and trying again with a new order works', async ({
  page,
  stack,
  confirmPosts,
  states,
}) => {
  const declined = await checkout(page, 'decline_reject_card');
  await declined.expectState('failed');
  await expect(declined.heading).toHaveText('Payment failed');
  await expect(declined.failureMessage).toContainText('declined');
  await expect(declined.failureMessage).toContainText('You have not been charged');
  const declinedOrder = declined.orderId;

  await page.getByRole('button', { name: 'Try again' }).click();
  const cart = new CartPage(page);
  await expect(cart.pay).toHaveText(/^Pay ₩/);
  const retried = await (await cart.payAndOpenWindow()).choose('approve');
  await retried.expectState('paid');

  expect(retried.orderId).not.toBe(declinedOrder);
  expect(states.sequence).toEqual(['submitting', 'failed', 'submitting', 'paid']);
  expect(confirmPosts.count).toBe(2);
  const charges = (await stack.pgStats()).charges_by_order;
  expect(charges[declinedOrder] ?? 0).toBe(0);
  expect(charges[retried.orderId]).toBe(1);
});

test('an expired card fails in plain words', async ({ page }) => {
  const confirm = await checkout(page, 'decline_invalid_expiration');
  await confirm.expectState('failed');
  await expect(confirm.failureMessage).toContainText('expired');
});

test('cancelling in the payment window explains that nothing was charged', async ({ page, confirmPosts }) => {
  const cart = new CartPage(page);
  await cart.open();
  const window: PgWindow = await cart.payAndOpenWindow();
  await window.card('cancel').click();

  await page.waitForURL(/\/pay\/fail\?/);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('You cancelled the payment');
  await expect(page.getByText('Nothing was charged')).toBeVisible();
  expect(confirmPosts.count).toBe(0);
  await page.getByRole('link', { name: 'Try again' }).click();
  await expect(cart.pay).toBeVisible();
});
