// A second purchase within ten minutes asks first: a duplicate may be hard to refund.
import { expect, test } from '../support/fixtures';
import { CartPage, PgWindow, checkout } from '../support/pages';

test('the recent-order warning appears for a second purchase, and Esc or Cancel keep the customer here', async ({
  page,
  context,
  stack,
}) => {
  const first = await checkout(page, 'approve');
  await first.expectState('paid');
  const cart = new CartPage(page);
  await cart.open();

  await cart.pay.click();
  await expect(cart.recentOrderDialog).toBeVisible();
  await expect(cart.recentOrderDialog).toContainText('You paid for an order a few minutes ago');
  await expect(cart.recentOrderDialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(cart.recentOrderDialog.getByRole('button', { name: 'Pay anyway' })).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(cart.recentOrderDialog).toBeHidden();
  await expect(cart.pay).toHaveText(/^Pay ₩/);

  await cart.pay.click();
  await cart.recentOrderDialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(cart.recentOrderDialog).toBeHidden();
  const orders = await (await context.request.get(`${stack.url}/api/orders`)).json();
  expect(orders).toHaveLength(1);

  await cart.pay.click();
  await cart.recentOrderDialog.getByRole('button', { name: 'Pay anyway' }).click();
  const window = await PgWindow.opened(page);
  const second = await window.choose('approve');
  await second.expectState('paid');
  expect(second.orderId).not.toBe(first.orderId);
});

test('a first purchase goes straight to the payment window', async ({ page }) => {
  const cart = new CartPage(page);
  await cart.open();
  await cart.payAndOpenWindow();
});
