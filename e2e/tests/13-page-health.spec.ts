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

test('the header takes the customer between the cart and the orders and shows where they are', async ({ page }) => {
  const cart = new CartPage(page);
  const nav = page.getByRole('navigation', { name: 'Main' });
  const current = nav.locator('[aria-current="page"]');
  await cart.open();
  await expect(current).toHaveText('Cart');

  // The landing cart is its own small bundle; Orders is a full load of the whole app.
  await nav.getByRole('link', { name: 'Orders' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Your orders');
  await expect(current).toHaveText('Orders');

  // From there the cart is an in-app route, and it works as the landing one does.
  await nav.getByRole('link', { name: 'Cart' }).click();
  await expect(cart.pay).toBeEnabled();
  await expect(cart.total).toHaveText('₩12,900');
  await expect(current).toHaveText('Cart');
  await page.getByRole('button', { name: 'One more Ceramic mug' }).click();
  await expect(cart.pay).toHaveText('Pay ₩21,400');
});

test('the landing cart fetches the whole app ahead, so the return from the payment window starts from cache', async ({ page }) => {
  const wholeApp = /\/payonce-page-[0-9a-f]+(_bg\.wasm|\.js)$/;
  const prefetched = page.waitForResponse((response) => wholeApp.test(response.url()) && response.url().endsWith('.wasm'));
  const cart = new CartPage(page);
  await cart.open();
  await (await prefetched).finished();

  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  const loads: { url: string; cached: boolean }[] = [];
  cdp.on('Network.responseReceived', ({ response }) => {
    if (wholeApp.test(response.url)) loads.push({ url: response.url, cached: Boolean(response.fromDiskCache || response.fromPrefetchCache) });
  });
  const confirm = await (await cart.payAndOpenWindow()).choose('approve');
  await confirm.expectState('paid');

  expect(loads.map((load) => load.url.split('.').pop()).sort()).toEqual(['js', 'wasm']);
  expect(loads.filter((load) => !load.cached)).toEqual([]);
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

test('a cart saved by an earlier visit comes back, without a line that is not a quantity', async ({ page }) => {
  const cart = new CartPage(page);
  await cart.open();
  await page.evaluate(() =>
    localStorage.setItem('payonce.cart', JSON.stringify({ quantities: { 'BEANS-200G': 2, 'TEA-TOWEL': 'two', 'GONE-SKU': 1 } })),
  );
  await page.reload();
  // Two bags of beans (₩30,000); the unreadable towel line and the product no longer sold are dropped.
  await expect(cart.total).toHaveText('₩30,000');
  await expect(page.locator('[data-sku="TEA-TOWEL"] output')).toHaveText('0');
});

test('a catalog the page cannot read says so, and Try again loads it', async ({ page }) => {
  const cart = new CartPage(page);
  await page.route('**/api/catalog', (route) =>
    route.fulfill({ json: [{ sku: 'MUG', name: 'Mug', description: '', name_ko: '머그', description_ko: '', price: '12900' }] }),
  );
  await page.goto('/');
  await expect(page.getByRole('alert')).toHaveText(/could not read/);
  await expect(cart.pay).toHaveCount(0);

  await page.unroute('**/api/catalog');
  await page.getByRole('button', { name: 'Try again' }).click();
  await expect(cart.pay).toBeEnabled();
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
