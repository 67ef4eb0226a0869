// A shop run as a cluster: three order servers sharing PostgreSQL behind
// haproxy, as scripts/cluster.sh runs it. The server that took the customer's
// confirm is killed while the PG charges: the page, served and checked through
// the balancer, still ends on the truth, and the customer is charged once.
import { expect, test } from '../support/fixtures';
import { OrderPage, checkout } from '../support/pages';

test.use({ topology: 'cluster' });

test('paying through the load balancer while the server that took the confirm is killed ends paid, charged once', async ({
  page,
  stack,
  confirmPosts,
  states,
}) => {
  test.setTimeout(90_000);
  // The PG finishes the charge only once the server that sent it is dead.
  const letPgFinish = await stack.holdPg();
  const processings = (await stack.pgStats()).processings;
  const confirm = await checkout(page, 'approve');
  await stack.pgStartedProcessing(processings);

  await stack.killServer(await stack.serverThatStored(confirm.orderId));
  await letPgFinish();

  // The POST died with its server; the page checks through the balancer, and
  // another server, once the dead one's hold on the payment lapses, asks the PG.
  await confirm.expectState('paid', 30_000);
  expect(states.sequence).toEqual(['submitting', 'checking', 'paid']);
  expect(confirmPosts.count).toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
  await page.goto(`/orders/${confirm.orderId}`);
  await expect(new OrderPage(page).status).toHaveAttribute('data-order-status', 'PAID');
});
