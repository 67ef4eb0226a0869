// A customer who uses only the keyboard pays and cancels: the skip link, the
// language switch, Pay, the PG's window, the outcome (which takes the focus),
// the order and its cancel dialog, each reached with Tab and used with Enter,
// and the focus visible on every stop. Wherever the page changes under the
// focus (an in-app navigation, an order cancelled, a list refreshing), the
// focus lands somewhere that makes sense, never on the page's body.
import type { Locator, Page } from '@playwright/test';
import { takePageClock } from '../support/clock';
import { expect, test } from '../support/fixtures';
import { CartPage, ConfirmPage, OrderPage, checkout } from '../support/pages';

/** Presses Tab until `target` has the focus; every stop on the way shows its focus. */
async function tabTo(page: Page, target: Locator, most = 40): Promise<void> {
  for (let pressed = 0; pressed < most; pressed++) {
    if (await target.evaluate((element) => element === document.activeElement).catch(() => false)) return;
    await page.keyboard.press('Tab');
    await expectVisibleFocus(page);
  }
  await expect(target, `reached with at most ${most} presses of Tab`).toBeFocused();
}

/** The focused element draws a focus indicator (an outline or a ring). */
async function expectVisibleFocus(page: Page): Promise<void> {
  const focus = await page.evaluate(() => {
    const element = document.activeElement;
    if (!element || element === document.body) return { what: 'body', shown: true };
    const style = getComputedStyle(element);
    const shown = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== 'none';
    return { what: `${element.tagName.toLowerCase()} ${element.textContent?.trim().slice(0, 30)}`, shown };
  });
  expect(focus.shown, `the focus on ${focus.what} is visible`).toBe(true);
}

test('the whole payment and its cancel with the keyboard alone', async ({ page, stack }) => {
  const cart = new CartPage(page);
  await cart.open();

  await page.keyboard.press('Tab');
  const skip = page.getByRole('link', { name: 'Skip to content' });
  await expect(skip).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.locator('main'), 'the skip link takes the focus to the content').toBeFocused();

  // A step at its limit keeps the focus (a disabled button would drop it to the page).
  await tabTo(page, page.getByRole('button', { name: 'One more Ceramic mug' }));
  await page.keyboard.press('Enter');
  await page.keyboard.press('Shift+Tab');
  const fewer = page.getByRole('button', { name: 'One fewer Ceramic mug' });
  await expect(fewer).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(fewer).toHaveAttribute('aria-disabled', 'true');
  await expect(fewer, 'the focus stays on the step at its limit').toBeFocused();
  await page.keyboard.press('Enter');
  await expect(cart.total).toHaveText('₩12,900');

  const switcher = page.getByTestId('lang-switch');
  await tabTo(page, switcher);
  await page.keyboard.press('Enter');
  await expect(page.locator('html')).toHaveAttribute('lang', 'ko');
  await expect(switcher, 'the focus stays on the switch').toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');

  await tabTo(page, cart.pay);
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/v1\/window\?/);
  await tabTo(page, page.locator('[data-scenario="approve"]'));
  await page.keyboard.press('Enter');

  const confirm = await ConfirmPage.opened(page);
  await confirm.expectState('paid');
  await expect(confirm.heading, 'the outcome takes the focus').toBeFocused();
  await tabTo(page, page.getByRole('link', { name: 'View your order' }));
  await page.keyboard.press('Enter');

  const order = new OrderPage(page);
  await expect(order.status).toHaveAttribute('data-order-status', 'PAID');
  await expect(page.locator('main'), 'an in-app navigation takes the focus to the new page').toBeFocused();
  await expect(page).toHaveTitle(/^.+ — Order — payonce$/);
  const cancel = page.getByTestId('cancel-order');
  await tabTo(page, cancel);
  await page.keyboard.press('Enter');
  const dialog = page.getByTestId('cancel-dialog');
  await expect(dialog.getByRole('button', { name: 'Keep the order' }), 'the safe choice has the focus').toBeFocused();
  await page.keyboard.press('Tab');
  await expect(dialog.getByRole('button', { name: 'Cancel and refund' })).toBeFocused();
  await expectVisibleFocus(page);
  await page.keyboard.press('Enter');

  await expect(order.status).toHaveAttribute('data-order-status', 'CANCELED');
  expect((await stack.pgStats()).refunds_by_order[confirm.orderId]).toBeGreaterThan(0);
  await expect(page.locator('#order-title'), 'the cancel button went with the paid order: the focus goes to the order').toBeFocused();
  await expectVisibleFocus(page);
});

test("'Try again' after a declined card takes the focus to the cart", async ({ page }) => {
  await takePageClock(page);
  const declined = await checkout(page, 'decline_reject_card');
  await declined.expectState('failed');
  await expect(declined.heading).toBeFocused();
  // The decline came before the page's wait for it ended: that wait's timer still
  // fires, and the outcome it finds must keep its focus (a page that redrew the
  // same outcome dropped it to the body when the machine was slow enough).
  await page.clock.fastForward('01:00');
  await expect(declined.heading, 'the outcome keeps the focus once the page stops waiting').toBeFocused();
  await tabTo(page, page.getByRole('button', { name: 'Try again' }));
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { level: 1, name: 'Your cart' })).toBeVisible();
  await expect(page.locator('main'), 'the cart has the focus, not the page body').toBeFocused();
  await expect(page).toHaveTitle('Your cart — payonce');
});

test('the orders list keeps the focus on an order while its status changes', async ({ page, context, stack }) => {
  const letPgFinish = await stack.holdPg();
  const before = (await stack.pgStats()).processings;
  const paying = await checkout(page, 'approve');
  await stack.pgStartedProcessing(before);

  const list = await context.newPage();
  await list.goto('/orders');
  const row = list.locator(`[data-order-id="${paying.orderId}"]`);
  await expect(row.locator('[data-status]')).not.toHaveAttribute('data-status', 'PAID');
  await tabTo(list, row);
  await letPgFinish();
  await expect(row.locator('[data-status]'), 'the list refreshed').toHaveAttribute('data-status', 'PAID', { timeout: 15_000 });
  await expect(row, 'the focus stays on the order that changed').toBeFocused();
});

test('KakaoPay is chosen with the arrow keys and paid with Enter', async ({ page, stack }) => {
  const cart = new CartPage(page);
  await cart.open();
  const card = page.getByRole('radio', { name: 'Card' });
  await tabTo(page, card);
  await expect(card).toBeChecked();

  // A radio group is one stop of Tab; the arrows move the choice within it.
  await page.keyboard.press('ArrowRight');
  const kakaopay = page.getByRole('radio', { name: 'KakaoPay' });
  await expect(kakaopay).toBeFocused();
  await expect(kakaopay).toBeChecked();
  await page.keyboard.press('Tab');
  await expect(cart.pay).toBeFocused();
  await page.keyboard.press('Enter');

  await page.waitForURL(/\/kakaopay\/window\//);
  await tabTo(page, page.locator('[data-choice="approve"]'));
  await page.keyboard.press('Enter');
  const paid = await ConfirmPage.opened(page);
  await paid.expectState('paid');
  await expect(paid.heading, 'the outcome takes the focus').toBeFocused();
  expect((await stack.kakaopayStats()).charges_by_order[paid.orderId]).toBe(1);
});
