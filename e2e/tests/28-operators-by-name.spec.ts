// Operators by name: the shop's operators file gives minseo a read-only token
// and jiwoo a refunding one. In the console minseo sees who she is signed in
// as, finds a customer's paid order and is refused its refund with the
// server's own words, and nothing is refunded; jiwoo then refunds it, and the
// order's audit names jiwoo, as the token says, not whoever the browser claims.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from '../support/fixtures';
import { checkout } from '../support/pages';
import { scratchDir } from '../support/processes';

const MINSEO = 'minseo-looks-0123456789abcdefghijklmnopqrstuvwxyz';
const JIWOO = 'jiwoo-refunds-0123456789abcdefghijklmnopqrstuvwxyz';

/** A line of the operators file, as `payonce-server operator-line` prints it. */
const line = (name: string, role: string, token: string) =>
  `${name} ${role} ${createHash('sha256').update(token).digest('hex')}`;

const operatorsFile = path.join(scratchDir('payonce-operators-'), 'operators');
writeFileSync(operatorsFile, `# the shop's operators\n${line('minseo', 'read-only', MINSEO)}\n${line('jiwoo', 'refund', JIWOO)}\n`);

test.use({ serverFlags: ['--operators-file', operatorsFile] });

test('a read-only operator is refused a refund in the console, and the refund operator refunds under her own name', async ({
  page,
  context,
  stack,
}) => {
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');

  const console = await context.newPage();
  await console.goto(`${stack.adminUrl}/admin/`);
  const signIn = async (token: string) => {
    await console.locator('#token').fill(token);
    await console.getByRole('button', { name: 'Use' }).click();
  };
  const openOrder = async () => {
    await console.getByRole('button', { name: 'List' }).click();
    await console.locator('#orders tr', { hasText: confirm.orderId }).click();
  };
  const refund = async (reason: string) => {
    console.once('dialog', (dialog) => dialog.accept());
    await console.locator('#refund-reason').fill(reason);
    await console.getByRole('button', { name: 'Refund' }).click();
  };

  await signIn(MINSEO);
  await expect(console.locator('#signed-in')).toHaveText('Signed in as minseo (read-only): you can look, not refund.');
  await openOrder();
  await expect(console.locator('#detail-status')).toHaveText('PAID');
  await refund('minseo tries');
  await expect(console.locator('#message')).toHaveText(/^OPERATOR_NOT_ALLOWED: minseo is a read-only operator/);
  await expect(console.locator('#message')).toHaveClass('error');
  await expect(console.locator('#detail-status')).toHaveText('PAID');
  await expect(console.locator('#audit tbody tr')).toHaveCount(0);
  expect((await stack.pgStats()).refunds_by_order[confirm.orderId] ?? 0, 'nothing refunded at the PG').toBe(0);

  await console.getByRole('button', { name: 'Forget' }).click();
  await expect(console.locator('#signed-in')).toBeHidden();
  await signIn(JIWOO);
  await expect(console.locator('#signed-in')).toHaveText('Signed in as jiwoo (refund).');
  await openOrder();
  await refund('the customer sent it back');
  await expect(console.locator('#detail-status')).toHaveText('CANCELED');
  const audit = console.locator('#audit tbody tr');
  await expect(audit).toHaveCount(1);
  await expect(audit).toContainText('jiwoo');
  await expect(audit).toContainText('cancel');
  const charged = (await stack.pgPaymentFor(confirm.orderId))!.totalAmount;
  expect((await stack.pgStats()).refunds_by_order[confirm.orderId], 'refunded in full at the PG').toBe(charged);
});
