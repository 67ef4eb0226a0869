import { expect, test } from '../support/fixtures';
import { OrderPage, checkout } from '../support/pages';

test('a fast approval is paid with one POST and one charge', async ({ page, stack, confirmPosts, states }) => {
  const confirm = await checkout(page, 'approve');

  await confirm.expectState('paid');
  await expect(confirm.heading).toHaveText('Payment complete');
  expect(states.sequence).toEqual(['submitting', 'paid']);
  expect(confirmPosts.count).toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);

  await page.getByRole('link', { name: 'View your order' }).click();
  await expect(new OrderPage(page).status).toHaveAttribute('data-order-status', 'PAID');
});

test('the paid page survives a reload without sending again', async ({ page, confirmPosts, states }) => {
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');

  await page.reload();

  await confirm.expectState('paid');
  expect(states.byPageLoad).toEqual([['submitting', 'paid'], ['paid']]);
  expect(confirmPosts.count).toBe(1);
});
