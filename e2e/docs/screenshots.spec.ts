// Screenshots of the cart, the PG window and each confirm-page state, in English
// and in Korean, for the book (docs/confirm-page.md, docs/languages.md).
import path from 'node:path';
import { Page } from '@playwright/test';
import { expect, test } from '../support/fixtures';
import { CartPage, OrderPage, checkout } from '../support/pages';

const out = (name: string) => path.join(__dirname, '..', '..', 'docs', 'screenshots', `${name}.png`);

/** What each language's screenshots are named with, and the words waited for. */
const languages = [
  { locale: 'en-US', prefix: '', waited: 'Waiting 1 s', fourthCheck: 'Check 4 of 12' },
  { locale: 'ko-KR', prefix: 'ko-', waited: '1초째 기다리는 중', fourthCheck: '확인 4/12회' },
];

for (const language of languages) {
  test.describe(language.locale, () => {
    test.use({ locale: language.locale });
    const shoot = (page: Page, name: string) => page.screenshot({ path: out(`${language.prefix}${name}`) });

    test('screenshots', async ({ page, stack }) => {
      test.setTimeout(120_000);
      const cart = new CartPage(page);
      await cart.open();
      await shoot(page, 'cart');
      await cart.pay.click();
      await page.waitForURL(/\/v1\/window\?/);
      await shoot(page, 'pg-window');

      await stack.configurePg({ latency_ms: 6_000 });
      let confirm = await checkout(page, 'approve');
      await confirm.expectState('submitting');
      await expect(page.getByTestId('elapsed')).toHaveText(language.waited);
      await shoot(page, 'state-submitting');
      await confirm.expectState('checking');
      await expect(page.getByTestId('check-count')).toHaveText(language.fourthCheck); // the progress bar shows
      await shoot(page, 'state-checking');

      // A new customer each time, so the recent-order warning does not step in.
      await page.context().clearCookies();
      await stack.configurePg({ latency_ms: 300 });
      confirm = await checkout(page, 'approve');
      await confirm.expectState('paid');
      await shoot(page, 'state-paid');

      await page.context().clearCookies();
      confirm = await checkout(page, 'decline_reject_card');
      await confirm.expectState('failed');
      await shoot(page, 'state-failed');

      await page.context().clearCookies();
      confirm = await checkout(page, 'approve_70s');
      await confirm.expectState('unresolved', 30_000);
      await shoot(page, 'state-unresolved');

      await new OrderPage(page).open(confirm.orderId);
      await page.locator('[data-order-status]').waitFor();
      await shoot(page, 'order-confirming');
    });

    test('screenshot of a success link opened in another browser', async ({ page, browser }) => {
      const confirm = await checkout(page, 'approve');
      await confirm.expectState('paid');
      const other = await (
        await browser.newContext({ viewport: { width: 720, height: 560 }, locale: language.locale })
      ).newPage();
      await other.goto(page.url());
      await expect(other.locator('[data-payment-state]')).toHaveAttribute('data-payment-state', 'elsewhere');
      await shoot(other, 'state-elsewhere');
    });
  });
}
