// The success link opened in another browser (here: another browser context, so
// another customer cookie). That browser cannot see the order: the page says so
// and where to look, sends no confirm, and never claims the payment failed.
import { expect, test } from '../support/fixtures';
import { checkout } from '../support/pages';

test('a success link opened in another browser sends nothing and says where to look', async ({
  page,
  browser,
  stack,
  confirmPosts,
  states,
}) => {
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');
  const elsewhere = await (await browser.newContext()).newPage();

  await elsewhere.goto(page.url());

  const root = elsewhere.locator('[data-payment-state]');
  await expect(root).toHaveAttribute('data-payment-state', 'elsewhere');
  await expect(elsewhere.getByRole('heading', { level: 1 })).toHaveText('This order was placed in another browser');
  await expect(root).toContainText('Open your orders in the browser you paid with');
  await expect(root).not.toContainText(/failed|not been charged/i);
  expect(states.of(elsewhere)).toEqual(['elsewhere']);
  expect(confirmPosts.count, 'the only confirm POST is the first browser’s').toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
});
