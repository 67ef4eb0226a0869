// The operators' console on the admin listener: an operator signs in with the
// token, finds a customer's paid order, reads its history, refunds part of it
// (written to the audit log under the token's operator), and runs a reconciliation.
import { expect, test } from '../support/fixtures';
import { CartPage, checkout } from '../support/pages';
import { OPERATOR_TOKEN } from '../support/stack';

test('an operator refunds part of a paid order from the console and reconciles the shop', async ({ page, context, stack }) => {
  // An order left unpaid, listed above the one paid next (longest unchanged first).
  await new CartPage(page).open();
  const unpaid = await page.request.post('/api/orders', { data: { items: [{ sku: 'CERAMIC-MUG', quantity: 1 }] } });
  expect(unpaid.status()).toBe(201);
  const { order_id: unpaidId } = await unpaid.json();
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');
  const charged = (await stack.pgPaymentFor(confirm.orderId))!.totalAmount;

  const console = await context.newPage();
  await console.goto(`${stack.adminUrl}/admin/`);
  // Without the token nothing is listed.
  await console.getByRole('button', { name: 'List' }).click();
  await expect(console.locator('#message')).toContainText(/token/i);

  await console.locator('#token').fill(OPERATOR_TOKEN);
  await console.getByRole('button', { name: 'Use' }).click();
  await expect(console.locator('#signed-in')).toHaveText('Signed in as operator (refund).');
  await console.getByRole('button', { name: 'List' }).click();
  const row = console.locator('#orders tr', { hasText: confirm.orderId });
  await expect(row).toContainText('PAID');

  // A click whose press lands before a refresh of the list and whose release
  // lands after it still opens the order, even when the refresh moved its row:
  // the unpaid order above it is closed in between, and goes below it. The list
  // holds the worker's earlier journeys' orders too: this one may be below the fold.
  await row.scrollIntoViewIfNeeded();
  const box = (await row.boundingBox())!;
  await console.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await console.mouse.down();
  expect((await page.request.post(`/api/orders/${unpaidId}/abandon`, { data: {} })).status()).toBe(200);
  await console.locator('#message').evaluate((message) => (message.textContent = ''));
  await console.locator('#filter').evaluate((form: HTMLFormElement) => form.requestSubmit());
  await expect(console.locator('#message')).toHaveText(/orders\./);
  expect((await row.boundingBox())!.y, 'the refresh moved the pressed row up').toBeLessThan(box.y);
  await console.mouse.up();
  await expect(console.locator('#detail-status')).toHaveText('PAID');
  // The card payment went through Toss, as its row said.
  await expect(console.locator('#detail-pg')).toHaveText('Toss');
  await expect(row).toContainText('Toss');
  await expect(console.locator('#history')).toContainText('PAID');
  // The customer's one confirm, as the PG answered it.
  const confirmCall = console.locator('#pg-calls tbody tr', { hasText: 'confirm' });
  await expect(confirmCall).toHaveCount(1);
  await expect(confirmCall).toContainText('customer');
  await expect(confirmCall).toContainText('HTTP 200');

  console.once('dialog', (dialog) => dialog.accept());
  await console.locator('#refund-amount').fill('1000');
  await console.locator('#refund-reason').fill('one cup was broken');
  await console.getByRole('button', { name: 'Refund' }).click();
  await expect(console.locator('#detail-status')).toHaveText('PARTIALLY_REFUNDED');
  await expect(console.locator('#detail-refunded')).toHaveText('1000');
  await expect(console.locator('#audit tbody tr', { hasText: 'cancel' })).toContainText('operator');
  await expect(console.locator('#pg-calls tbody tr', { hasText: 'cancel' })).toContainText('operator');
  const refunded = (await stack.pgStats()).refunds_by_order[confirm.orderId];
  expect(refunded, 'refunded at the PG').toBe(1000);
  expect(refunded).toBeLessThan(charged);

  // The PG's ledger agrees with the shop about this order, part refund included
  // (the worker's earlier journeys share the PG; their orders are theirs to answer for).
  // A charge another system made on the same PG account: a dry run shows it
  // as not the shop's, and no pass ever refunds it.
  const posOrderId = `pos-terminal-${confirm.orderId.slice(-8)}`;
  await stack.chargeAtPg(posOrderId, 30000);
  await console.getByRole('button', { name: 'Dry run' }).click();
  await expect(console.locator('#reconcile-summary')).toContainText('Dry run, nothing changed');
  await expect(console.locator('#not-the-shops')).toContainText(posOrderId);
  await console.getByRole('button', { name: 'Run now' }).click();
  await expect(console.locator('#reconcile-summary')).toHaveText(/^Run \d+ .* matched/);
  await expect(console.locator('#mismatches')).not.toContainText(confirm.orderId);
  await expect(console.locator('#not-the-shops')).toContainText(posOrderId);
  expect((await stack.pgStats()).refunds_by_order[posOrderId] ?? 0, 'not the shop\'s: never refunded').toBe(0);

  // The customer's own page shows the part refund.
  await page.goto(`/orders/${confirm.orderId}`);
  await expect(page.locator('[data-order-status]')).toHaveAttribute('data-order-status', 'PARTIALLY_REFUNDED');
});
