// The checks run after every journey (support/fixtures.ts) catch what they are
// for: each test here breaks one invariant on purpose, and passes only if the
// check after it fails with that invariant's message.
import type { Page } from '@playwright/test';
import { expect, refuseChecksOff, test } from '../support/fixtures';
import { CartPage, checkout } from '../support/pages';

test('a confirm POST sent twice from the page is caught', async ({ page, invariants }) => {
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');
  const query = new URL(page.url()).searchParams;

  const status = await page.evaluate(
    async ({ orderId, paymentKey, amount }) => {
      const response = await fetch(`/api/orders/${orderId}/confirm`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
        body: JSON.stringify({ payment_key: paymentKey, amount: Number(amount) }),
      });
      return response.status;
    },
    { orderId: confirm.orderId, paymentKey: query.get('paymentKey')!, amount: query.get('amount')! },
  );

  expect(status, 'the server refuses it: the order is paid').toBe(409);
  const caught = /confirm POSTs the browser sent for ord_\w+/;
  await expect(invariants.check()).rejects.toThrow(caught);
  invariants.expectViolation(caught);
});

test('a confirm POST that did not come from a browser is caught', async ({ page, request, invariants }) => {
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');

  await request.post(`/api/orders/${confirm.orderId}/confirm`, {
    headers: { 'Idempotency-Key': 'from-outside-the-browser' },
    data: { payment_key: 'pk_outside', amount: 1 },
  });

  const caught = /confirm POSTs the server received: no more than the browser sent/;
  await expect(invariants.check()).rejects.toThrow(caught);
  invariants.expectViolation(caught);
});

test('a payment that does not settle fails the check, not the test timeout', async ({ page, stack, invariants }) => {
  const started = Date.now();
  await stack.configurePg({ latency_ms: 40_000 });
  const processings = (await stack.pgStats()).processings;
  await checkout(page, 'decline_reject_card');
  // The payment is the server's (stored, and at the PG) once the PG is
  // processing it; what the page says meanwhile runs on its own clock (a busy
  // machine once found it past "submitting" before the test looked).
  await stack.pgStartedProcessing(processings);

  // However long the steps above took (a busy machine makes them slow), what
  // is left of the test's own time is less than the check waits for a
  // payment to settle: only the check's own deadline, which it sets before
  // waiting, lets it fail with its message instead of the test timing out.
  // The check waits 4 s here, not the 25 s a payment that should settle gets:
  // this one is 40 s at the PG.
  test.setTimeout(Date.now() - started + 2_000);
  invariants.expectViolation(/every payment settles/, { settleWithin: 4_000 });
});

test('a refund that does not go out fails the check, not the test timeout', async ({ page, stack, invariants }) => {
  const started = Date.now();
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');
  // The PG takes the cancel, and answers it long after the server stopped waiting.
  await stack.configurePg({ latency_ms: 40_000 });
  const cancel = await page.request.post(`/api/orders/${confirm.orderId}/cancel`, {
    headers: { 'Idempotency-Key': `refund-${confirm.orderId}` },
  });
  expect(cancel.status(), await cancel.text()).toBe(202);
  expect((await cancel.json()).status).toBe('CANCEL_REQUESTED');

  // As for a payment: only the check's own deadline lets it fail with its message.
  test.setTimeout(Date.now() - started + 2_000);
  invariants.expectViolation(/every refund asked for goes out/, { settleWithin: 4_000 });
});

test("anything the shop's Content-Security-Policy blocks is caught", async ({ page, invariants }) => {
  await page.goto('/');
  await expect(page.getByRole('button', { name: /pay/i })).toBeVisible();

  // An inline script the policy does not list by hash, as an injected one would be.
  await page.evaluate(() => {
    const script = document.createElement('script');
    script.textContent = 'window.injected = true;';
    document.body.append(script);
  });

  const caught = /what the shop's Content-Security-Policy blocked/;
  await expect(invariants.check()).rejects.toThrow(caught);
  invariants.expectViolation(caught);
});

test("a charge the shop's order does not show is caught", async ({ page, stack, invariants }) => {
  const cart = new CartPage(page);
  await cart.open();
  // An order of this customer's, never paid through the shop, charged at the PG all the same.
  const response = await page.request.post('/api/orders', { data: { items: [{ sku: 'CERAMIC-MUG', quantity: 1 }] } });
  expect(response.status()).toBe(201);
  const { order_id: orderId, amount } = await response.json();
  await stack.chargeAtPg(orderId, amount);

  const caught = /CREATED order ord_\w+ in the PG's ledger/;
  await expect(invariants.check()).rejects.toThrow(caught);
  invariants.expectViolation(caught);
});

test('an order charged twice at the PG is caught', async ({ page, stack, invariants }) => {
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');
  const amount = Number(new URL(page.url()).searchParams.get('amount'));
  // Another system charges the paid order again, under the same order id.
  await stack.chargeAtPg(confirm.orderId, amount);

  const caught = /no order was charged twice/;
  await expect(invariants.check()).rejects.toThrow(caught);
  invariants.expectViolation(caught);
});

test("an order no test customer placed, seen by the server during the test, is caught", async ({
  page,
  stack,
  invariants,
}) => {
  const cart = new CartPage(page);
  await cart.open();
  // A client the test does not watch (no browser, no cookie of a test customer's) orders.
  const response = await fetch(`${stack.url}/api/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ items: [{ sku: 'CERAMIC-MUG', quantity: 1 }] }),
  });
  expect(response.status).toBe(201);

  const caught = /order ord_\w+, seen by the server or the PG during the test, is a test customer's/;
  await expect(invariants.check()).rejects.toThrow(caught);
  invariants.expectViolation(caught);
});

test("a page that says paid for an order the server has failed is caught", async ({ page, invariants }) => {
  // The confirm's answer is changed on its way to the page: the card was declined, the page hears PAID.
  await page.route('**/api/orders/*/confirm', async (route) => {
    const response = await route.fetch();
    await route.fulfill({ response, json: { ...(await response.json()), status: 'PAID', failure: null } });
  });
  const confirm = await checkout(page, 'decline_reject_card');
  await confirm.expectState('paid');

  const caught = /the page showed paid for ord_\w+/;
  await expect(invariants.check()).rejects.toThrow(caught);
  invariants.expectViolation(caught);
});

test('a page that says failed for an order the server never refused or failed is caught', async ({
  page,
  invariants,
}) => {
  // The server refuses the confirm (its amount is changed on the way), which
  // leaves the order CREATED; the page hears a FAILED order instead of the refusal.
  await page.route('**/api/orders/*/confirm', async (route) => {
    const sent = route.request().postDataJSON();
    const refused = await route.fetch({ postData: { ...sent, amount: sent.amount + 1 } });
    expect(refused.status(), 'the server refused the changed amount').toBe(400);
    const orderId = new URL(route.request().url()).pathname.split('/').at(-2)!;
    const order = await (await page.request.get(`/api/orders/${orderId}`)).json();
    const failure = { code: 'REJECT_CARD_PAYMENT', message: 'declined' };
    await route.fulfill({ status: 200, json: { ...order, status: 'FAILED', failure } });
  });
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('failed');

  const caught = /the page showed failed for ord_\w+: the server has it CREATED/;
  await expect(invariants.check()).rejects.toThrow(caught);
  invariants.expectViolation(caught);
});

/** Makes the page say `state` for its order, as a page with a bug in its own
 *  reading of the server's answers would: the server last told it PAID. */
async function pageSays(page: Page, state: string): Promise<void> {
  await page.evaluate((shown) => {
    document.querySelector('[data-payment-state]')!.setAttribute('data-payment-state', shown);
  }, state);
}

test('a page that says refunded for an order the server has paid is caught', async ({ page, invariants }) => {
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');
  await pageSays(page, 'refunded');
  await confirm.expectState('refunded');

  const caught = /the page showed refunded for ord_\w+/;
  await expect(invariants.check()).rejects.toThrow(caught);
  invariants.expectViolation(caught);
});

test('a page that says it could not confirm yet after the server said paid is caught', async ({ page, invariants }) => {
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');
  await pageSays(page, 'unresolved');
  await confirm.expectState('unresolved');

  const caught = /the page showed unresolved for ord_\w+, though the server had last told it PAID/;
  await expect(invariants.check()).rejects.toThrow(caught);
  invariants.expectViolation(caught);
});

test('a page that says the order is in another browser after the server showed it is caught', async ({
  page,
  invariants,
}) => {
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');
  await pageSays(page, 'elsewhere');
  await confirm.expectState('elsewhere');

  const caught = /the page showed elsewhere for ord_\w+; the server's last answer to it/;
  await expect(invariants.check()).rejects.toThrow(caught);
  invariants.expectViolation(caught);
});

test('a confirm POST the browser sent that never reached the server is caught', async ({
  page,
  confirmPosts,
  invariants,
}) => {
  // Something between the page and the server (not the network failing, which
  // the checks count as dropped) answers the confirm itself.
  await page.route('**/api/orders/*/confirm', (route) =>
    route.fulfill({ status: 503, contentType: 'application/json', body: '{"code":"INTERNAL","message":"a proxy"}' }),
  );
  await checkout(page, 'approve');
  await expect.poll(() => confirmPosts.count).toBe(1);

  const caught = /confirm POSTs the server received: at least those that could reach it/;
  await expect(invariants.check()).rejects.toThrow(caught);
  invariants.expectViolation(caught);
});

test("a journey may not turn the checks off; the book's screenshots may", () => {
  expect(() => refuseChecksOff(false, '/repo/e2e/playwright.config.ts')).toThrow(
    'checkInvariants can be turned off only by playwright.docs.config.ts, for the screenshots',
  );
  expect(() => refuseChecksOff(false, '/repo/e2e/playwright.docs.config.ts')).not.toThrow();
  expect(() => refuseChecksOff(true, '/repo/e2e/playwright.config.ts')).not.toThrow();
});
