// The rarer outcomes and what is around them, in both languages, at a desktop
// and at 320 px, with no axe-core violation: an outcome the page could not
// confirm yet, an order paid in another browser, the question before a second
// purchase (which gives the focus back to Pay when it closes), an order after
// its refund, and the operators' reconciliation.
import { audit } from '../support/accessibility';
import { expect, test } from '../support/fixtures';
import { CartPage, OrderPage, checkout } from '../support/pages';
import { OPERATOR_TOKEN } from '../support/stack';

/** What a screen reader is told when the page cannot confirm yet. */
const UNRESOLVED_SAID = {
  'en-US':
    'We could not confirm your payment yet It will be settled shortly, and you will not be charged twice. Your order page shows the result as soon as we know it.',
  'ko-KR': '아직 결제를 확인하지 못했습니다 곧 정리되며, 두 번 결제되지 않습니다. 결과가 나오는 대로 주문 페이지에 표시됩니다.',
};

for (const locale of ['en-US', 'ko-KR']) {
  test.describe(`in ${locale}`, () => {
    test.use({ locale });

    test('could not confirm yet, and a payment placed in another browser, have no violation', async ({ page, browser, stack }) => {
      // The PG holds the payment past the page's checks: the page cannot confirm yet.
      const letPgFinish = await stack.holdPg();
      const unsure = await checkout(page, 'approve');
      await unsure.expectState('unresolved', 30_000);
      await expect(unsure.heading, 'the outcome takes the focus').toBeFocused();
      await expect(page.getByTestId('announced-outcome'), 'announced at once').toHaveText(UNRESOLVED_SAID[locale as keyof typeof UNRESOLVED_SAID]);
      await audit(page, 'could not confirm yet');
      await letPgFinish();

      // The same return link, opened in a browser that did not place the order.
      const elsewhere = await (await browser.newContext({ locale })).newPage();
      await elsewhere.goto(page.url());
      await expect(elsewhere.locator('[data-payment-state]')).toHaveAttribute('data-payment-state', 'elsewhere');
      await audit(elsewhere, 'a payment made in another browser');
      await elsewhere.context().close();
    });

    test('the question before a second purchase, and an order after its refund, have no violation', async ({ page }) => {
      const first = await checkout(page, 'approve');
      await first.expectState('paid');
      const cart = new CartPage(page);
      await cart.open();
      await cart.pay.focus();
      await page.keyboard.press('Enter');
      await expect(cart.recentOrderDialog).toBeVisible();
      await audit(page, 'the question before a second purchase');
      await page.keyboard.press('Escape');
      await expect(cart.recentOrderDialog).toBeHidden();
      await expect(cart.pay, 'closing the question gives the focus back to Pay').toBeFocused();

      const order = new OrderPage(page);
      await order.open(first.orderId);
      await page.getByTestId('cancel-order').click();
      await page.getByTestId('cancel-dialog').getByRole('button', { name: /Cancel and refund|취소하고 환불받기/ }).click();
      await expect(order.status).toHaveAttribute('data-order-status', 'CANCELED');
      await expect(page.getByTestId('announced-order-change'), 'the refund is announced').not.toHaveText('');
      await audit(page, 'an order after its refund');
    });
  });
}

test("the operators' reconciliation has no violation", async ({ page, context, stack }) => {
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');
  const console = await context.newPage();
  await console.goto(`${stack.adminUrl}/admin/`);
  await console.locator('#token').fill(OPERATOR_TOKEN);
  await console.getByRole('button', { name: 'Use' }).click();
  await stack.chargeAtPg(`pos-terminal-${confirm.orderId.slice(-8)}`, 30000);
  await console.getByRole('button', { name: 'Dry run' }).click();
  await expect(console.locator('#reconcile-summary')).toContainText('Dry run, nothing changed');
  await audit(console, 'a reconciliation dry run with a charge that is not the shop’s');
  await console.getByRole('button', { name: 'Run now' }).click();
  await expect(console.locator('#reconcile-summary')).toHaveText(/^Run \d+ .* matched/);
  await audit(console, 'a reconciliation run');
});
