// The page as a customer meets it: no console errors, the total in won, the
// keyboard, and a phone-sized screen.
import { expect, test } from '../support/fixtures';
import { CartPage } from '../support/pages';

test('every page loads without console errors', async ({ page }) => {
  const errors: string[] = [];
  page.on('console', (message) => message.type() === 'error' && errors.push(`${page.url()}: ${message.text()}`));
  page.on('pageerror', (error) => errors.push(`${page.url()}: ${error.message}`));

  for (const path of ['/', '/orders', '/pay/fail?code=PAY_PROCESS_CANCELED', '/nowhere']) {
    await page.goto(path);
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  }
  expect(errors).toEqual([]);
});

test('an order that does not exist says so', async ({ page }) => {
  await page.goto('/orders/ord_missing');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Order not found');
});

test('quantities change the total, formatted in won', async ({ page }) => {
  const cart = new CartPage(page);
  await cart.open();
  await expect(cart.total).toHaveText('₩12,900');

  await page.getByRole('button', { name: 'One more Ceramic mug' }).click();
  await page.getByRole('button', { name: 'One more Ceramic mug' }).click();
  await expect(cart.total).toHaveText('₩29,900');
  await expect(cart.pay).toHaveText('Pay ₩29,900');

  await page.reload();
  await expect(cart.total).toHaveText('₩29,900');
});

test('a confirm link without its parameters explains itself and sends nothing', async ({ page, confirmPosts }) => {
  await page.goto('/pay/success?orderId=ord_x');
  await expect(page.locator('[data-payment-state]')).toHaveAttribute('data-payment-state', 'invalid');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('This payment link is incomplete');
  expect(confirmPosts.count).toBe(0);
});

test('checkout works with the keyboard alone on a phone-sized screen', async ({ page }) => {
  await page.setViewportSize({ width: 375, height: 740 });
  const cart = new CartPage(page);
  await cart.open();

  await cart.pay.focus();
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/v1\/window\?/);
  const approve = page.locator('[data-scenario="approve"]');
  await approve.focus();
  await page.keyboard.press('Enter');

  await expect(page.locator('[data-payment-state]')).toHaveAttribute('data-payment-state', 'paid');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow, 'no horizontal scrolling').toBeLessThanOrEqual(0);
});
