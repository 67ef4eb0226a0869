import { expect, test } from '../support/fixtures';
import { OrderPage, checkout } from '../support/pages';

test('a customer cancels a paid order from its page and sees it refunded, once', async ({ page, stack }) => {
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');
  await page.getByRole('link', { name: 'View your order' }).click();
  const order = new OrderPage(page);
  await expect(order.status).toHaveAttribute('data-order-status', 'PAID');

  // Asked again in a dialog: keeping the order sends nothing.
  await page.getByTestId('cancel-order').click();
  const dialog = page.getByTestId('cancel-dialog');
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Keep the order' }).click();
  await expect(dialog).toBeHidden();
  // Counted for this order: another test's refund may still be going out on this stack.
  expect((await stack.pgStats()).cancel_requests_by_order[confirm.orderId]).toBeUndefined();

  await page.getByTestId('cancel-order').click();
  await dialog.getByRole('button', { name: 'Cancel and refund' }).click();

  await expect(order.status).toHaveAttribute('data-order-status', 'CANCELED');
  await expect(page.getByTestId('announced-order-change'), 'the change is said to a screen reader').toHaveText(
    'This payment was cancelled after it went through; the whole amount is refunded to your card.',
  );
  await expect(page.getByTestId('refunded-amount')).toBeVisible();
  await expect(page.getByTestId('cancel-order')).toHaveCount(0);
  const stats = await stack.pgStats();
  expect(stats.cancel_requests_by_order[confirm.orderId]).toBe(1);
  expect(stats.refunds_by_order[confirm.orderId]).toBeGreaterThan(0);
  expect(stats.over_refunds).toEqual([]);
});

test('a refund the PG turns away twice stays requested across a reload, then goes out once', async ({ page, stack }) => {
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');
  await page.getByRole('link', { name: 'View your order' }).click();
  const order = new OrderPage(page);
  await expect(order.status).toHaveAttribute('data-order-status', 'PAID');
  // First the PG's one-cancel-a-second refusal...
  await stack.configurePg({ faults: { forbidden_consecutive: 1 } });
  await page.getByTestId('cancel-order').click();
  await page.getByTestId('cancel-dialog').getByRole('button', { name: 'Cancel and refund' }).click();
  await expect(order.status).toHaveAttribute('data-order-status', 'CANCEL_REQUESTED');
  await expect(page.locator('[data-status="CANCEL_REQUESTED"]')).toHaveText('Refund requested');
  expect((await stack.pgStats()).faults_injected.forbidden_consecutive).toBeGreaterThan(0);

  // ...a reload while it is pending shows it pending and offers no second cancel...
  await page.reload();
  await expect(order.status).toHaveAttribute('data-order-status', 'CANCEL_REQUESTED');
  await expect(page.getByTestId('cancel-order')).toHaveCount(0);

  // ...then a 500 on recovery's next try...
  await stack.configurePg({ faults: { forbidden_consecutive: 0, error_500: 1 } });
  await expect
    .poll(async () => (await stack.pgStats()).faults_injected.error_500, { message: 'a cancel answered 500', timeout: 15_000 })
    .toBeGreaterThan(0);
  await expect(order.status).toHaveAttribute('data-order-status', 'CANCEL_REQUESTED');

  // ...and then it goes out, once.
  await stack.configurePg({ faults: { error_500: 0 } });
  await expect(order.status).toHaveAttribute('data-order-status', 'CANCELED', { timeout: 15_000 });
  await page.goto('/orders');
  await expect(page.locator(`[data-order-id="${confirm.orderId}"] [data-status]`)).toHaveText('Refunded');
  const stats = await stack.pgStats();
  const charged = (await stack.pgPaymentFor(confirm.orderId))!.totalAmount;
  expect(stats.refunds_by_order[confirm.orderId], 'refunded at the PG: the amount paid, once').toBe(charged);
  expect(stats.over_refunds).toEqual([]);
});

test('a refund the PG refuses for good ends refused, and the page says why in both languages', async ({ page, stack }) => {
  const confirm = await checkout(page, 'approve_refund_period_over');
  await confirm.expectState('paid');
  await page.getByRole('link', { name: 'View your order' }).click();
  const order = new OrderPage(page);
  await expect(order.status).toHaveAttribute('data-order-status', 'PAID');

  await page.getByTestId('cancel-order').click();
  await page.getByTestId('cancel-dialog').getByRole('button', { name: 'Cancel and refund' }).click();

  // Not "refund requested" forever: paid, with the refusal and what it means.
  const refusal = page.getByTestId('refund-refusal');
  await expect(refusal).toContainText('Your refund was refused. The refund period for this payment has passed.');
  await expect(refusal).toContainText('Nothing was refunded and your payment stands.');
  await expect(refusal.locator('code')).toHaveText('EXCEED_MAX_REFUND_DUE');
  await expect(order.status).toHaveAttribute('data-order-status', 'PAID');
  await expect(page.locator('[data-status="PAID"]')).toHaveText('Paid');
  await expect(page.getByTestId('cancel-order'), 'asked again, the PG would refuse again').toHaveCount(0);

  // The open order page follows the switch at once, without a reload.
  await page.getByTestId('lang-switch').click();
  await expect(refusal).toContainText('환불이 거절되었습니다. 이 결제는 환불 가능한 기간이 지났습니다.');
  await expect(refusal).toContainText('환불된 금액은 없으며 결제는 그대로 유지됩니다.');

  const stats = await stack.pgStats();
  // Counted for this order: the worker's PG serves its earlier journeys too.
  expect(stats.cancel_requests_by_order[confirm.orderId], 'one refusal, not retried').toBe(1);
  expect(stats.refunds_by_order[confirm.orderId] ?? 0).toBe(0);
});

test('Escape on the cancel dialog reopened after a refund that failed refunds nothing', async ({ page, stack }) => {
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');
  await page.getByRole('link', { name: 'View your order' }).click();
  const order = new OrderPage(page);
  await expect(order.status).toHaveAttribute('data-order-status', 'PAID');
  const cancels: string[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url().endsWith('/cancel')) cancels.push(request.url());
  });
  // The first refund never reaches the shop: the customer's connection drops.
  await page.route('**/api/orders/*/cancel', (route) => route.abort('internetdisconnected'), { times: 1 });
  await page.getByTestId('cancel-order').click();
  await page.getByTestId('cancel-dialog').getByRole('button', { name: 'Cancel and refund' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'could not reach the shop' })).toBeVisible();
  expect(cancels).toHaveLength(1);

  // Opened again and dismissed with Escape: the answer is "keep", whatever the last one was.
  await page.getByTestId('cancel-order').click();
  const dialog = page.getByTestId('cancel-dialog');
  await expect(dialog).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId('cancel-order'), 'focus goes back to the button that opened it').toBeFocused();

  await page.reload();
  await expect(order.status).toHaveAttribute('data-order-status', 'PAID');
  expect(cancels, 'no refund was sent after Escape').toHaveLength(1);
  expect((await stack.pgStats()).refunds_by_order[confirm.orderId], 'nothing refunded at the PG').toBeUndefined();
});
