// Back during a payment keeps the customer on the page and tells them why.
// Real timings: 15 s of submitting and then checking leave room to press Back in each.
import { Page } from '@playwright/test';
import { expect, test } from '../support/fixtures';
import { checkout } from '../support/pages';
import { Stack } from '../support/stack';

test.use({ timings: 'real' });

/** A payment the PG takes 20 s over: room to press Back while submitting, and again while checking. */
async function slowPayment(page: Page, stack: Stack) {
  await stack.configurePg({ latency_ms: 20_000 });
  const confirm = await checkout(page, 'approve');
  return { confirm, url: page.url(), toast: page.getByTestId('toast') };
}

test('back during submitting and checking stays on the page with a toast', async ({
  page,
  stack,
  confirmPosts,
  states,
}) => {
  const { confirm, url, toast } = await slowPayment(page, stack);

  await confirm.expectState('submitting');
  await page.goBack();
  await expect(toast).toContainText('stay on this page');
  expect(page.url()).toBe(url);
  const firstToast = await toast.getAttribute('data-toast-id');

  await confirm.expectState('checking', 20_000);
  await page.goBack();
  await expect(toast).not.toHaveAttribute('data-toast-id', firstToast!);
  await expect(toast).toContainText('stay on this page');
  expect(page.url()).toBe(url);

  await confirm.expectState('paid', 15_000);
  expect(states.sequence).toEqual(['submitting', 'checking', 'paid']);
  expect(confirmPosts.count).toBe(1);
});

test('the header links are blocked while the payment is in flight', async ({ page, stack, confirmPosts }) => {
  await stack.configurePg({ latency_ms: 5_000 });
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('submitting');

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Orders' }).click();

  await expect(page.getByTestId('toast')).toContainText('stay on this page');
  expect(new URL(page.url()).pathname).toBe('/pay/success');
  await expect(confirm.root).toHaveAttribute('data-payment-state', /submitting|checking/);
  await confirm.expectState('paid', 15_000);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Orders' }).click();
  await expect(page).toHaveURL(/\/orders$/);
  expect(confirmPosts.count).toBe(1);
});

test('Back after the customer has used the page is blocked too', async ({ page, stack, confirmPosts }) => {
  const { confirm, url, toast } = await slowPayment(page, stack);
  await confirm.expectState('submitting');

  // A real click on an in-app link: blocked, and from now on the browser counts the
  // page as used, so its history entries are ones its Back button does not skip.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Orders' }).click();
  await expect(toast).toContainText('stay on this page');
  const afterClick = await toast.getAttribute('data-toast-id');

  await page.goBack();

  await expect(toast).not.toHaveAttribute('data-toast-id', afterClick!);
  await expect(toast).toContainText('stay on this page');
  expect(page.url()).toBe(url);
  await expect(confirm.root).toHaveAttribute('data-payment-state', 'submitting');

  await confirm.expectState('paid', 30_000);
  expect(confirmPosts.count).toBe(1);
});
