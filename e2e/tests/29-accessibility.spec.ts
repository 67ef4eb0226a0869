// Every page a customer meets, in each state a payment passes through, in both
// languages, checked by axe-core (WCAG 2.0 to 2.2, A and AA) on a desktop and on
// a 320 CSS px screen (what 400 % zoom of a 1280 px window gives): no
// violation, and nothing wider than the screen.
import type { Page } from '@playwright/test';
import { audit, stillCopy } from '../support/accessibility';
import { expect, test } from '../support/fixtures';
import { CartPage, OrderPage, checkout } from '../support/pages';
import { OPERATOR_TOKEN } from '../support/stack';

// The page's real timings: 15 s of processing, then checking for 50 s.
test.use({ timings: 'real' });

/** What a screen reader is told, in each language: checking at 15 s, then the outcome. */
const SAID = {
  'en-US': {
    checking: 'Checking your payment The payment provider is taking longer than usual. We are checking with them; you will not be charged twice.',
    progress: /^Check \d+ of 25$/,
    paid: 'Payment complete Thank you. You paid ₩12,900.',
  },
  'ko-KR': {
    checking: '결제를 확인하고 있습니다 결제사의 응답이 평소보다 늦습니다. 결제사에 확인하고 있으며, 두 번 결제되지 않습니다.',
    progress: /^확인 \d+\/25회$/,
    paid: '결제가 완료되었습니다 감사합니다. 12,900원을 결제했습니다.',
  },
};

/** Counts every change to the text of `testId`'s element from now on. */
async function countChanges(page: Page, testId: string): Promise<() => Promise<number>> {
  await page.evaluate((testId) => {
    const region = document.querySelector(`[data-testid="${testId}"]`)!;
    (window as unknown as { __changes: number }).__changes = 0;
    new MutationObserver((records) => ((window as unknown as { __changes: number }).__changes += records.length)).observe(region, {
      childList: true,
      characterData: true,
      subtree: true,
    });
  }, testId);
  return () => page.evaluate(() => (window as unknown as { __changes: number }).__changes);
}

for (const locale of ['en-US', 'ko-KR']) {
  test.describe(`in ${locale}`, () => {
    test.use({ locale });

    test("the cart and the PG's window have no violation", async ({ page }) => {
      const cart = new CartPage(page);
      await cart.open();
      await audit(page, 'the cart');
      await cart.payAndOpenWindow();
      await audit(page, "the PG's window");
    });

    test('a payment processing, checking, then paid has no violation, and says each state once', async ({ page, stack }) => {
      // The PG holds the payment: the page checks, for as long as the test holds it.
      const letPgFinish = await stack.holdPg();
      const confirm = await checkout(page, 'approve');
      // Processing lasts 15 s; "preparing", before it, is the same view without the seconds.
      await confirm.expectState('submitting');
      // Copied now, audited once the PG has let the payment go: an audit takes
      // its time, and the server waits on the PG for 60 s at most.
      const processing = await stillCopy(page);
      await confirm.expectState('checking', 25_000);
      const said = SAID[locale as keyof typeof SAID];
      const progress = page.getByTestId('announced-progress');
      await expect(progress, 'checking is announced politely').toHaveText(said.checking);
      await expect(page.getByTestId('announced-outcome')).toHaveText('');
      await expect(page.getByRole('progressbar')).toHaveAttribute('aria-valuetext', said.progress);
      const changes = await countChanges(page, 'announced-progress');
      const counter = page.getByTestId('check-count');
      const before = await counter.textContent();
      await expect(counter, 'a check later').not.toHaveText(before!, { timeout: 10_000 });
      expect(await changes(), 'checking is announced once, not at every check').toBe(0);
      const checking = await stillCopy(page);
      await letPgFinish();
      await confirm.expectState('paid');
      await expect(page.getByTestId('announced-outcome'), 'the outcome is announced at once').toHaveText(said.paid);
      await expect(confirm.heading, 'the outcome takes the focus').toBeFocused();
      await expect(page).toHaveTitle(`${await confirm.heading.textContent()} — payonce`);
      await audit(page, 'paid');
      await processing.audit('processing');
      await checking.audit('checking');
    });

    test('a paid order, its cancel dialog and the orders list have no violation', async ({ page }) => {
      const confirm = await checkout(page, 'approve');
      await confirm.expectState('paid');

      await new OrderPage(page).open(confirm.orderId);
      await expect(page.locator('[data-order-status]')).toHaveAttribute('data-order-status', 'PAID');
      await audit(page, 'the paid order');
      await page.getByTestId('cancel-order').click();
      await expect(page.getByTestId('cancel-dialog')).toBeVisible();
      await audit(page, 'the cancel dialog');
      await page.keyboard.press('Escape');
      await expect(page.getByTestId('cancel-order'), 'closing the dialog gives the focus back to its button').toBeFocused();
      await expect(page, 'the tab names the order').toHaveTitle(/ — (Order|주문) — payonce$/);

      await page.goto('/orders');
      await expect(page.locator(`[data-order-id="${confirm.orderId}"]`)).toBeVisible();
      await audit(page, 'the orders list');
    });

    test('a declined payment and the window closed without paying have no violation', async ({ page }) => {
      const confirm = await checkout(page, 'decline_reject_card');
      await confirm.expectState('failed');
      await audit(page, 'failed');

      const cart = new CartPage(page);
      await cart.open();
      await (await cart.payAndOpenWindow()).close();
      await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
      await audit(page, 'the window closed without paying');
    });

    test('a link without its payment and a page that does not exist have no violation', async ({ page }) => {
      await page.goto('/pay/success');
      await expect(page.locator('[data-payment-state]')).toHaveAttribute('data-payment-state', 'invalid');
      await audit(page, 'a link without its payment');

      await page.goto('/no-such-page');
      await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
      await audit(page, 'not found');
    });
  });
}

test("the operators' console, signed in, with an order open, has no violation", async ({ page, context, stack }) => {
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');
  const console = await context.newPage();
  await console.goto(`${stack.adminUrl}/admin/`);
  await audit(console, 'the console, signed out');
  await console.locator('#token').fill(OPERATOR_TOKEN);
  await console.getByRole('button', { name: 'Use' }).click();
  await console.getByRole('button', { name: 'List' }).click();
  const row = console.locator('#orders tr', { hasText: confirm.orderId });
  await expect(row).toBeVisible();
  await audit(console, 'the console with its orders');
  // Opened from the keyboard: the order's button, then Enter; the focus lands on the order.
  await row.getByRole('button', { name: confirm.orderId }).focus();
  await console.keyboard.press('Enter');
  await expect(console.locator('#detail-status')).toHaveText('PAID');
  await expect(console.getByRole('heading', { name: `Order ${confirm.orderId}` })).toBeFocused();
  await audit(console, "the console with an order's story");
});
