// KakaoPay beside cards: the customer chooses it in the cart, pays in KakaoPay's
// window (its QR page on a PC, KakaoPay itself on a phone), and comes back to the
// same confirm page, which behaves as it does for a card: one POST, 15 s (3 s
// here), checking, never a second confirm. KakaoPay has no idempotency key, so
// the server never sends an approve twice either: an approve whose answer is
// lost is settled by looking the payment up.
import { Dialog, Page } from '@playwright/test';
import { expect, test } from '../support/fixtures';
import { CartPage, ConfirmPage, KakaoPayWindow, OrderPage, checkoutWithKakaoPay, openKakaoPay } from '../support/pages';
import { Stack } from '../support/stack';

// Room to check for 20 s after the POST: the approves held below settle through
// the server's timeout (4 s) and then a lookup, on a machine that may be busy.
test.use({ serverFlags: ['--max-checks', '40'] });

/** Approves KakaoPay received, and its charges for `orderId`, from the start of the test. */
async function atKakaoPay(stack: Stack, orderId: string): Promise<{ approves: number; charges: number }> {
  const stats = await stack.kakaopayStats();
  return { approves: stats.confirm_requests, charges: stats.charges_by_order[orderId] ?? 0 };
}

/** Pays with KakaoPay while KakaoPay keeps its approves processing, until the
 *  page is checking: the confirm page, and what lets the approve finish. */
async function approvingHeld(page: Page, stack: Stack): Promise<{ confirm: ConfirmPage; release: () => Promise<void> }> {
  await stack.configureKakaoPay({ hold: true });
  const confirm = await checkoutWithKakaoPay(page, 'approve');
  await confirm.expectState('checking');
  return { confirm, release: () => stack.configureKakaoPay({ hold: false }) };
}

/** Until the server has stopped waiting for the approve: the order is UNKNOWN, and only a lookup can settle it. */
async function untilTheServerGaveUp(page: Page, orderId: string): Promise<void> {
  await expect
    .poll(async () => (await (await page.request.get(`/api/orders/${orderId}`)).json()).status, {
      message: `the server stopped waiting for KakaoPay's approve of ${orderId}`,
    })
    .toBe('UNKNOWN');
}

test('the cart offers KakaoPay beside cards; a PC gets its QR page, one approve, paid', async ({
  page,
  stack,
  confirmPosts,
  states,
}) => {
  const approvesBefore = (await stack.kakaopayStats()).confirm_requests;
  const tossConfirmsBefore = (await stack.pgStats()).confirm_requests;
  const cart = new CartPage(page);
  await cart.open();
  const choice = page.getByRole('group', { name: 'Pay with' });
  await expect(choice.getByRole('radio', { name: 'Card' })).toBeChecked();
  await expect(choice.getByRole('radio', { name: 'KakaoPay' })).not.toBeChecked();
  await cart.chooseKakaoPay();

  const window = await cart.payAndOpenKakaoPay();
  expect(window.mode, "a PC opens KakaoPay's QR page").toBe('pc');
  await expect(page.getByText('₩12,900')).toBeVisible();
  const confirm = await window.choose('approve');

  await confirm.expectState('paid');
  await expect(confirm.heading).toHaveText('Payment complete');
  expect(states.sequence).toEqual(['submitting', 'paid']);
  expect(confirmPosts.count).toBe(1);
  expect(await atKakaoPay(stack, confirm.orderId)).toEqual({ approves: approvesBefore + 1, charges: 1 });
  expect((await stack.pgStats()).confirm_requests, 'nothing went to Toss').toBe(tossConfirmsBefore);

  await page.getByRole('link', { name: 'View your order' }).click();
  await expect(new OrderPage(page).status).toHaveAttribute('data-order-status', 'PAID');
});

test('a card KakaoPay declines at the approve fails in plain words, and paying again works', async ({
  page,
  stack,
  confirmPosts,
}) => {
  const declined = await checkoutWithKakaoPay(page, 'decline_reject_card');
  await declined.expectState('failed');
  await expect(declined.heading).toHaveText('Payment failed');
  await expect(declined.failureMessage).toHaveText('The payment was declined. You have not been charged.');
  await expect(declined.root).toContainText('KAKAOPAY_DECLINED');
  expect((await atKakaoPay(stack, declined.orderId)).charges).toBe(0);

  await page.getByRole('button', { name: 'Try again' }).click();
  const cart = new CartPage(page);
  await cart.chooseKakaoPay();
  const paid = await (await cart.payAndOpenKakaoPay()).choose('approve');
  await paid.expectState('paid');
  expect(paid.orderId).not.toBe(declined.orderId);
  expect(confirmPosts.count).toBe(2);
});

test('KakaoPay that cannot be prepared says so; trying again opens its window, and a card is one step back', async ({
  page,
  stack,
  confirmPosts,
}) => {
  const cart = new CartPage(page);
  await cart.open();
  await cart.chooseKakaoPay();
  await page.route('**/api/orders/*/window', (route) => route.fulfill({ status: 503, json: { code: 'PG_UNREACHABLE' } }));
  await cart.pay.click();

  await expect(page.getByRole('heading', { level: 1 })).toHaveText('KakaoPay could not be opened');
  await expect(page.getByTestId('pay-error')).toHaveText('The shop answered with an error (503).');
  await page.unroute('**/api/orders/*/window');
  await page.getByRole('button', { name: 'Try again' }).click();
  expect((await KakaoPayWindow.opened(page)).mode).toBe('pc');

  // KakaoPay's window took the step's place: Back is the cart, where a card is the other way to pay.
  await page.goBack();
  await page.getByRole('radio', { name: 'Card' }).check();
  await expect(cart.pay).toBeEnabled();
  const confirm = await (await cart.payAndOpenWindow()).choose('approve');
  await confirm.expectState('paid');
  expect(confirmPosts.count).toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
});

// KakaoPay's cancel_url and fail_url: the fail page closes the order and says what the server says.
for (const { choice, heading } of [
  { choice: 'quit', heading: 'You cancelled the payment' },
  { choice: 'wrong_password', heading: 'The payment did not go through' },
] as const) {
  test(`leaving KakaoPay's window (${choice}) says nothing was charged, and sends no confirm`, async ({
    page,
    confirmPosts,
  }) => {
    await (await openKakaoPay(page)).leave(choice);

    await expect(page.getByRole('heading', { level: 1 })).toHaveText(heading);
    await expect(page.getByTestId('charge-status')).toHaveText('Nothing was charged.');
    expect(confirmPosts.count).toBe(0);
    await page.getByRole('link', { name: 'Try again' }).click();
    await expect(new CartPage(page).pay).toBeVisible();
  });
}

test('a 500 after KakaoPay charged is settled by a lookup, never by a second approve', async ({
  page,
  stack,
  confirmPosts,
}) => {
  const approvesBefore = (await stack.kakaopayStats()).confirm_requests;
  const confirm = await checkoutWithKakaoPay(page, 'error_500_then_charge');

  await confirm.expectState('paid');
  expect(confirmPosts.count).toBe(1);
  expect(await atKakaoPay(stack, confirm.orderId)).toEqual({ approves: approvesBefore + 1, charges: 1 });
});

test("an approve slower than the server's wait shows checking, then paid, with one approve", async ({
  page,
  stack,
  confirmPosts,
  states,
}) => {
  const approvesBefore = (await stack.kakaopayStats()).confirm_requests;
  const { confirm, release } = await approvingHeld(page, stack);
  await untilTheServerGaveUp(page, confirm.orderId);

  await release();

  await confirm.expectState('paid');
  expect(states.sequence).toEqual(['submitting', 'checking', 'paid']);
  expect(confirmPosts.count).toBe(1);
  expect(await atKakaoPay(stack, confirm.orderId)).toEqual({ approves: approvesBefore + 1, charges: 1 });
});

test('a reload while KakaoPay is approving resumes checking without a new confirm', async ({
  page,
  stack,
  confirmPosts,
  states,
}) => {
  page.on('dialog', (dialog: Dialog) => void dialog.accept());
  const { confirm, release } = await approvingHeld(page, stack);
  await confirm.heading.click();

  await page.reload();
  await confirm.expectState('checking');
  await release();

  await confirm.expectState('paid');
  expect(states.byPageLoad).toEqual([
    ['submitting', 'checking'],
    ['checking', 'paid'],
  ]);
  expect(confirmPosts.count).toBe(1);
  expect((await atKakaoPay(stack, confirm.orderId)).charges).toBe(1);
});

test("a second tab on KakaoPay's return checks the order and sends nothing", async ({
  page,
  context,
  stack,
  confirmPosts,
  states,
}) => {
  const { confirm, release } = await approvingHeld(page, stack);
  const second = await context.newPage();
  await second.goto(page.url());
  await expect(second.locator('[data-payment-state]')).toHaveAttribute('data-payment-state', 'checking');

  await release();

  for (const tab of [page, second]) {
    await expect(tab.locator('[data-payment-state]')).toHaveAttribute('data-payment-state', 'paid');
  }
  expect(states.of(second), 'the second tab only checked').not.toContain('submitting');
  expect(confirmPosts.count).toBe(1);
  expect((await atKakaoPay(stack, confirm.orderId)).charges).toBe(1);
});

test("on a phone the shop opens KakaoPay's mobile page", async ({ browser, stack }) => {
  const phone = await browser.newContext({ isMobile: true, hasTouch: true, viewport: { width: 390, height: 844 } });
  const page = await phone.newPage();
  const cart = new CartPage(page);
  await cart.open();
  await cart.chooseKakaoPay();
  const window = await cart.payAndOpenKakaoPay();
  expect(window.mode).toBe('mobile');
  const confirm = await window.choose('approve');
  await confirm.expectState('paid');
  expect((await atKakaoPay(stack, confirm.orderId)).charges).toBe(1);
  await phone.close();
});

test.describe('in a Korean browser', () => {
  test.use({ locale: 'ko-KR' });

  test('the choice, KakaoPay\'s window and the outcome speak Korean', async ({ page }) => {
    const cart = new CartPage(page);
    await cart.open();
    const choice = page.getByRole('group', { name: '결제 수단' });
    await expect(choice.getByRole('radio', { name: '카드' })).toBeChecked();
    await cart.chooseKakaoPay('카카오페이');

    await cart.payAndOpenKakaoPay();
    await expect(page.locator('html')).toHaveAttribute('lang', 'ko');
    await page.locator('[data-choice="approve"]').click();

    const paid = await ConfirmPage.opened(page);
    await paid.expectState('paid');
    await expect(paid.heading).toHaveText('결제가 완료되었습니다');
    await expect(paid.root).toContainText('12,900원을 결제했습니다');
  });

  test('a declined KakaoPay payment and a quit window are explained in Korean', async ({ page }) => {
    const declined = await checkoutWithKakaoPay(page, 'decline_reject_card');
    await declined.expectState('failed');
    await expect(declined.heading).toHaveText('결제에 실패했습니다');
    await expect(declined.failureMessage).toHaveText('결제가 거절되었습니다. 결제되지 않았습니다.');

    await (await openKakaoPay(page)).leave('quit');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('결제를 취소했습니다');
    await expect(page.getByTestId('charge-status')).toHaveText('결제된 금액은 없습니다.');
  });
});
