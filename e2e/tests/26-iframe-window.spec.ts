import { expect, test } from '../support/fixtures';
import { Page } from '@playwright/test';
import { CartPage, ConfirmPage, PgWindow } from '../support/pages';

// The PG's SDK as Toss's behaves: on a PC its window is an iframe over the
// shop's page; on a phone the page leaves for it. The shop's own CSP must let
// the frame load (the fixture fails the journey on any CSP violation).

test.describe('on a PC, the window is an iframe over the page', () => {
  test.beforeEach(async ({ stack }) => {
    await stack.configurePg({ window_mode: 'toss' });
  });

  test('a card in the iframe takes the whole page back to the shop, paid', async ({ page }) => {
    const cart = new CartPage(page);
    await cart.open();
    await cart.pay.click();
    const frame = page.frameLocator('[data-fake-pg-window] iframe');
    await expect(frame.getByRole('heading', { level: 1 })).toBeVisible();
    expect(new URL(page.url()).pathname, 'the shop stays under the window').toBe('/');

    await frame.locator('[data-scenario="approve"]').click();

    const confirm = await ConfirmPage.opened(page);
    await confirm.expectState('paid');
    await expect(page.locator('[data-fake-pg-window]')).toHaveCount(0);
  });

  test("the iframe's close button leaves the order closed by the server, nothing charged", async ({ page, stack }) => {
    const cart = new CartPage(page);
    await cart.open();
    await cart.pay.click();
    const frame = page.frameLocator('[data-fake-pg-window] iframe');

    // The SDK rejects with USER_CANCEL; the cart goes where the redirect would.
    await frame.getByRole('button', { name: 'Close the payment window' }).click();

    await page.waitForURL(/\/pay\/fail\?code=PAY_PROCESS_CANCELED&orderId=/);
    await expect(page.getByTestId('pay-fail')).toBeVisible();
    await expect(page.getByTestId('charge-status')).toHaveText('Nothing was charged.');
    const orderId = new URL(page.url()).searchParams.get('orderId')!;
    expect((await stack.pgStats()).charges_by_order[orderId] ?? 0).toBe(0);
  });

  test('a card declined in the iframe fails with the reason, nothing charged', async ({ page, stack }) => {
    const cart = new CartPage(page);
    await cart.open();
    await cart.pay.click();
    const frame = page.frameLocator('[data-fake-pg-window] iframe');

    await frame.locator('[data-scenario="decline_reject_card"]').click();

    const confirm = await ConfirmPage.opened(page);
    await confirm.expectState('failed');
    await expect(confirm.failureMessage).toContainText('declined');
    expect((await stack.pgStats()).charges_by_order[confirm.orderId] ?? 0).toBe(0);
  });
});

/** Pay from the cart on a phone: the page leaves for the PG's window. */
async function payOnAPhone(page: Page): Promise<PgWindow> {
  const cart = new CartPage(page);
  await cart.open();
  return cart.payAndOpenWindow();
}

test.describe('on a phone, the page leaves for the window', () => {
  // A phone's screen and touch: its pointer is coarse.
  test.use({ viewport: { width: 412, height: 915 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2.6 });

  test.beforeEach(async ({ stack }) => {
    await stack.configurePg({ window_mode: 'toss' });
  });

  test('the same PG navigates instead of framing', async ({ page }) => {
    const window = await payOnAPhone(page);
    const confirm = await window.choose('approve');
    await confirm.expectState('paid');
  });

  test("the window's close button brings the customer back, nothing charged", async ({ page, stack }) => {
    const window = await payOnAPhone(page);

    await window.close();

    await expect(page.getByTestId('charge-status')).toHaveText('Nothing was charged.');
    const orderId = new URL(page.url()).searchParams.get('orderId')!;
    expect((await stack.pgStats()).charges_by_order[orderId] ?? 0).toBe(0);
  });

  test('a card declined in the window fails with the reason, nothing charged', async ({ page, stack }) => {
    const window = await payOnAPhone(page);

    const confirm = await window.choose('decline_reject_card');

    await confirm.expectState('failed');
    await expect(confirm.failureMessage).toContainText('declined');
    expect((await stack.pgStats()).charges_by_order[confirm.orderId] ?? 0).toBe(0);
  });
});
