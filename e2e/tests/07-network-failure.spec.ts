// The confirm POST reaches the server, but the browser's connection breaks
// before the answer arrives: the page checks instead of resending.
import { expect, test } from '../support/fixtures';
import { checkout } from '../support/pages';

test('a confirm whose answer is lost on the network is checked, not resent', async ({
  page,
  stack,
  confirmPosts,
  states,
}) => {
  await page.route('**/api/orders/*/confirm', async (route) => {
    await route.fetch(); // the server receives and processes the request...
    await route.abort('connectionreset'); // ...and the answer never reaches the page
  });

  const confirm = await checkout(page, 'approve');

  await confirm.expectState('paid');
  expect(states.sequence).toEqual(['submitting', 'checking', 'paid']);
  expect(confirmPosts.count).toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
});
