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
  expect((await stack.pgStats()).cancel_requests).toBe(0);

  await page.getByTestId('cancel-order').click();
  await dialog.getByRole('button', { name: 'Cancel and refund' }).click();

  await expect(order.status).toHaveAttribute('data-order-status', 'CANCELED');
  await expect(page.getByTestId('refunded-amount')).toBeVisible();
  await expect(page.getByTestId('cancel-order')).toHaveCount(0);
  const stats = await stack.pgStats();
  expect(stats.cancel_requests).toBe(1);
  expect(stats.refunds_by_order[confirm.orderId]).toBeGreaterThan(0);
  expect(stats.over_refunds).toEqual([]);
});

test('a refund the PG turns away shows as requested, then refunded once it goes out', async ({ page, stack }) => {
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');
  await page.getByRole('link', { name: 'View your order' }).click();
  const order = new OrderPage(page);
  await expect(order.status).toHaveAttribute('data-order-status', 'PAID');
  await stack.configurePg({ faults: { forbidden_consecutive: 1 } });

  await page.getByTestId('cancel-order').click();
  await page.getByTestId('cancel-dialog').getByRole('button', { name: 'Cancel and refund' }).click();
  await expect(order.status).toHaveAttribute('data-order-status', 'CANCEL_REQUESTED');
  await expect(page.locator('[data-status="CANCEL_REQUESTED"]')).toHaveText('Refund requested');

  await stack.configurePg({ faults: { forbidden_consecutive: 0 } });
  await expect(order.status).toHaveAttribute('data-order-status', 'CANCELED', { timeout: 15_000 });
  await page.goto('/orders');
  await expect(page.locator(`[data-order-id="${confirm.orderId}"] [data-status]`)).toHaveText('Refunded');
  const stats = await stack.pgStats();
  expect(Object.keys(stats.refunds_by_order)).toContain(confirm.orderId);
  expect(stats.over_refunds).toEqual([]);
});
