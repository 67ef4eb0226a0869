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
  // The server's English order name is marked as English inside the sentence.
  const [paid] = await (await context.request.get(`${stack.url}/api/orders`)).json();
  await expect(cart.recentOrderDialog.locator('#recent-body [lang="en"]')).toHaveText(paid.order_name);
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
  let recent: unknown;
  await page.route('**/api/orders/recent', async (route) => {
    const response = await route.fetch();
    recent = await response.json();
    await route.fulfill({ response });
  });
  let dialogs = 0;
  await page.exposeFunction('__dialogOpened', () => (dialogs += 1));
  await page.evaluate(() => {
    const opened = (window as unknown as { __dialogOpened(): void }).__dialogOpened;
    new MutationObserver(() => document.querySelector('dialog[open]') && opened()).observe(document, {
      subtree: true,
      childList: true,
      attributes: true,
    });
  });

  await cart.payAndOpenWindow();

  expect(recent, 'the server knows no recent order').toBeNull();
  expect(dialogs, 'recent-order warnings shown').toBe(0);
});

test('a payment still being processed asks first too', async ({ page, context, stack }) => {
  // The PG holds the first payment until the second tab has asked.
  const letPgFinish = await stack.holdPg();
  const processings = (await stack.pgStats()).processings;
  await checkout(page, 'approve');
  await stack.pgStartedProcessing(processings);
  const cart = new CartPage(await context.newPage());
  await cart.open();

  await cart.pay.click();

  await expect(cart.recentOrderDialog).toBeVisible();
  await expect(cart.recentOrderDialog).toContainText('A payment of yours is still being processed');
  await cart.recentOrderDialog.getByRole('button', { name: 'Cancel' }).click();
  // Let go, the payment settles (the invariants check it after every journey)
  // while the first tab shows what the server knows: paid, or, if the machine
  // was slow enough to outlast its checking window, unresolved.
  await letPgFinish();
});
