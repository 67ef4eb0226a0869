// Back during a payment keeps the customer on the page and tells them why.
// Real timings: 15 s of submitting, then checking. The page learns nothing of
// the payment until the test lets it (`holdPaymentNews`), so the payment is in
// flight for as long as the test's steps take, however busy the machine: a PG
// that took 20 s, or 5 s, was once done before the test pressed Back.
import { Page } from '@playwright/test';
import { expect, test } from '../support/fixtures';
import { stopPageClock } from '../support/clock';
import { checkout, holdPaymentNews } from '../support/pages';

test.use({ timings: 'real' });

/** A payment the page sees in flight until `letItGo` is called. */
async function heldPayment(page: Page) {
  const letItGo = await holdPaymentNews(page);
  const confirm = await checkout(page, 'approve');
  return { confirm, url: page.url(), toast: page.getByTestId('toast'), letItGo };
}

test('back during submitting and checking stays on the page with a toast', async ({
  page,
  confirmPosts,
  states,
}) => {
  const { confirm, url, toast, letItGo } = await heldPayment(page);

  await confirm.expectState('submitting');
  // A toast stays 4 s: the page's clock stands still while the test reads it.
  const restartClock = await stopPageClock(page);
  await page.goBack();
  await expect(toast).toContainText('stay on this page');
  await expect(toast.locator('xpath=..'), 'said as an alert, at once').toHaveAttribute('role', 'alert');
  expect(page.url()).toBe(url);
  const firstToast = await toast.getAttribute('data-toast-id');
  await restartClock();

  await confirm.expectState('checking', 30_000);
  await page.goBack();
  await expect(toast).not.toHaveAttribute('data-toast-id', firstToast!);
  await expect(toast).toContainText('stay on this page');
  expect(page.url()).toBe(url);

  await letItGo();
  await confirm.expectState('paid', 15_000);
  expect(states.sequence).toEqual(['submitting', 'checking', 'paid']);
  expect(confirmPosts.count).toBe(1);
});

test('the header links are blocked while the payment is in flight', async ({ page, confirmPosts }) => {
  const { confirm, letItGo } = await heldPayment(page);
  await confirm.expectState('submitting');

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Orders' }).click();

  await expect(page.getByTestId('toast')).toContainText('stay on this page');
  expect(new URL(page.url()).pathname).toBe('/pay/success');
  await expect(confirm.root).toHaveAttribute('data-payment-state', /submitting|checking/);
  await letItGo();
  await confirm.expectState('paid', 15_000);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Orders' }).click();
  await expect(page).toHaveURL(/\/orders$/);
  expect(confirmPosts.count).toBe(1);
});

test('Back after the customer has used the page is blocked too', async ({ page, confirmPosts }) => {
  const { confirm, url, toast, letItGo } = await heldPayment(page);
  await confirm.expectState('submitting');

  // A toast stays 4 s: the page's clock stands still while the test reads them.
  const restartClock = await stopPageClock(page);
  // A real click on an in-app link: blocked, and from now on the browser counts the
  // page as used, so its history entries are ones its Back button does not skip.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Orders' }).click();
  await expect(toast).toContainText('stay on this page');
  const afterClick = await toast.getAttribute('data-toast-id');

  await page.goBack();

  await expect(toast).not.toHaveAttribute('data-toast-id', afterClick!);
  await expect(toast).toContainText('stay on this page');
  expect(page.url()).toBe(url);
  await expect(confirm.root).toHaveAttribute('data-payment-state', /submitting|checking/);

  await restartClock();
  await letItGo();
  await confirm.expectState('paid', 30_000);
  expect(confirmPosts.count).toBe(1);
});
