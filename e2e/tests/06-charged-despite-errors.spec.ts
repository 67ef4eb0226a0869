// The PG charges but the answer is lost: a 500 after charging, or a connection
// reset after charging. The page must not say "failed"; it checks, and recovery
// learns the truth by asking the PG again (the PG replays its first answer to the
// same key, so recovery looks the payment up).
import { expect, test } from '../support/fixtures';
import { Scenario, checkout } from '../support/pages';

for (const scenario of ['error_500_then_charge', 'reset_after_charge'] as Scenario[]) {
  test(`${scenario} is checked, then paid, with one POST`, async ({ page, stack, confirmPosts, states }) => {
    const confirm = await checkout(page, scenario);

    await confirm.expectState('paid', 20_000);
    expect(states.sequence).toEqual(['submitting', 'checking', 'paid']);
    expect(confirmPosts.count).toBe(1);
    const order = await (await page.request.get(`/api/orders/${confirm.orderId}`)).json();
    expect(order.status, "the order, as the PG's ledger has it").toBe('PAID');
    expect((await stack.pgPaymentFor(confirm.orderId))?.status).toBe('DONE');
    expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
  });
}
