// The order server dies while the PG is charging: the page checks, says it
// could not confirm yet, and once the server is back the payment is settled
// from what it wrote before calling the PG, with one charge.
import { expect, test } from '../support/fixtures';
import { OrderPage, checkout } from '../support/pages';

test('the order server down during confirm leaves the payment unresolved, then settled after restart', async ({
  page,
  stack,
  confirmPosts,
  states,
}) => {
  test.setTimeout(90_000);
  // The PG finishes the charge only once the server is dead and the page has
  // given up, however slow the machine.
  const letPgFinish = await stack.holdPg();
  const processings = (await stack.pgStats()).processings;
  const confirm = await checkout(page, 'approve');
  await stack.pgStartedProcessing(processings);

  await stack.killServer();

  await confirm.expectState('unresolved', 30_000);
  expect(states.sequence).toEqual(['submitting', 'checking', 'unresolved']);
  await letPgFinish();
  await stack.restartServer();

  // The server is back on a port of its own; the customer's cookie is the host's, not the port's.
  await page.goto(`${stack.url}/orders/${confirm.orderId}`);
  await expect(new OrderPage(page).status).toHaveAttribute('data-order-status', 'PAID', { timeout: 40_000 });
  expect(confirmPosts.count).toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
});
