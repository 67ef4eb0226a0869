// A shop with a backend of its own (the sample shop) sends its customer to
// payonce's checkout page and gets them back: the shop's own order page tells
// what payonce knows, whatever the PG did, and a link works in one browser only.
import { Page } from '@playwright/test';
import { expect, test } from '../support/fixtures';
import { ConfirmPage, OrderPage, PgWindow, Scenario } from '../support/pages';
import { SampleShop, checkoutAtPayonce, createCheckout } from '../support/shop';
import { OPERATOR_TOKEN } from '../support/stack';

function shopOf(stack: { shop?: SampleShop }): SampleShop {
  if (!stack.shop) throw new Error('this stack runs no sample shop');
  return stack.shop;
}

/** Buys two copies of one book at the sample shop: the browser lands on
 *  payonce's checkout page. Returns the checkout's id. */
async function buyAtTheShop(page: Page, shop: SampleShop): Promise<string> {
  await page.goto(`${shop.url}/?lang=en`);
  await page.getByTestId('qty-human-acts').fill('2');
  await page.getByTestId('buy').click();
  await page.waitForURL(/\/checkout\/ord_books_\w+$/);
  await expect(page.getByText('Sample Bookshop')).toBeVisible();
  return new URL(page.url()).pathname.split('/').pop()!;
}

/** Pays on payonce's checkout page with a test card, to the confirm page. */
async function payByCard(page: Page, scenario: Scenario): Promise<ConfirmPage> {
  await page.getByTestId('pay').click();
  const window = await PgWindow.opened(page);
  return window.choose(scenario);
}

/** The shop's order page the customer is sent back to, and its status. */
async function backToTheShop(page: Page, shop: SampleShop): Promise<void> {
  await page.getByTestId('back-to-shop').click();
  await page.waitForURL(new RegExp(`^${shop.url}/orders/`));
}

const shopStatus = (page: Page) => page.getByTestId('order-status');

test('a customer of the shop pays on payonce and comes back to the shop, which shows it paid', async ({
  page,
  stack,
  confirmPosts,
}) => {
  const shop = shopOf(stack);
  await buyAtTheShop(page, shop);
  await expect(page.getByTestId('checkout-total')).toHaveText('₩28,000');
  const confirm = await payByCard(page, 'approve');
  await confirm.expectState('paid');
  expect(confirm.orderId).toMatch(/^ord_books_/);
  await backToTheShop(page, shop);
  await expect(shopStatus(page)).toHaveAttribute('data-status', 'PAID');
  await expect(page.getByTestId('order-total')).toHaveText('₩28,000');
  expect(confirmPosts.count).toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
});

test('a declined card: the shop says nothing was charged, and the customer may pay again', async ({ page, stack }) => {
  const shop = shopOf(stack);
  await buyAtTheShop(page, shop);
  const declined = await payByCard(page, 'decline_reject_card');
  await declined.expectState('failed');
  await backToTheShop(page, shop);
  await expect(shopStatus(page)).toHaveAttribute('data-status', 'FAILED');
  expect((await stack.pgStats()).charges_by_order[declined.orderId] ?? 0).toBe(0);
  // The shop offers the same books again: a new order of its own, and a new checkout.
  await page.getByTestId('order-again').click();
  await page.waitForURL(/\/checkout\/ord_books_\w+$/);
  expect(new URL(page.url()).pathname).not.toContain(declined.orderId);
  const paid = await payByCard(page, 'approve');
  await paid.expectState('paid');
});

test('a PG that takes 40 s: the customer back at the shop sees it being confirmed, then paid', async ({ page, stack }) => {
  test.setTimeout(120_000);
  const shop = shopOf(stack);
  await stack.configurePg({ latency_ms: 40_000 });
  await buyAtTheShop(page, shop);
  const confirm = await payByCard(page, 'approve');
  // The fast timings give up checking long before 40 s: the page says so, and offers the way back.
  await confirm.expectState('unresolved', 30_000);
  await backToTheShop(page, shop);
  await expect(shopStatus(page)).toHaveAttribute('data-status', /^(PENDING|UNKNOWN)$/);
  // The shop's page asks payonce again by itself until the payment is settled.
  await expect(shopStatus(page)).toHaveAttribute('data-status', 'PAID', { timeout: 60_000 });
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
});

test('the order server killed mid-payment: the shop shows the one charge once it is back', async ({
  page,
  stack,
}) => {
  test.setTimeout(90_000);
  const shop = shopOf(stack);
  const letPgFinish = await stack.holdPg();
  const processings = (await stack.pgStats()).processings;
  await buyAtTheShop(page, shop);
  const confirm = await payByCard(page, 'approve');
  await stack.pgStartedProcessing(processings);
  await stack.killServer();
  await confirm.expectState('unresolved', 30_000);
  await letPgFinish();
  await stack.restartServer();

  // The way back is on the page already: the shop asks the server that is back.
  await backToTheShop(page, shop);
  await expect(shopStatus(page)).toHaveAttribute('data-status', 'PAID', { timeout: 40_000 });
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
});

test('the checkout page fetches the whole app ahead, so the return from the payment window starts from cache', async ({
  page,
  stack,
}) => {
  const shop = shopOf(stack);
  const wholeApp = /\/payonce-page-[0-9a-f]+(_bg\.wasm|\.js)$/;
  const prefetched = page.waitForResponse((response) => wholeApp.test(response.url()) && response.url().endsWith('.wasm'));
  await buyAtTheShop(page, shop);
  await expect(page.getByTestId('pay')).toBeEnabled();
  await (await prefetched).finished();

  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  const loads: { url: string; cached: boolean }[] = [];
  cdp.on('Network.responseReceived', ({ response }) => {
    if (wholeApp.test(response.url)) loads.push({ url: response.url, cached: Boolean(response.fromDiskCache || response.fromPrefetchCache) });
  });
  const confirm = await payByCard(page, 'approve');
  await confirm.expectState('paid');

  expect(loads.map((load) => load.url.split('.').pop()).sort()).toEqual(['js', 'wasm']);
  expect(loads.filter((load) => !load.cached)).toEqual([]);
});

test('a checkout opened again once paid shows its order, with the way back to the shop', async ({ page, stack }) => {
  const shop = shopOf(stack);
  const checkoutId = await buyAtTheShop(page, shop);
  const confirm = await payByCard(page, 'approve');
  await confirm.expectState('paid');

  await page.goto(`/checkout/${checkoutId}`);
  await page.waitForURL(new RegExp(`/orders/${checkoutId}$`));
  await expect(new OrderPage(page).status).toHaveAttribute('data-order-status', 'PAID');
  await expect(page.getByTestId('pay')).toHaveCount(0);
  await backToTheShop(page, shop);
  await expect(shopStatus(page)).toHaveAttribute('data-status', 'PAID');
});

test('a checkout link opened in a second browser is refused there, and still pays in the first', async ({
  page,
  browser,
  stack,
}) => {
  const shop = shopOf(stack);
  const checkoutId = await buyAtTheShop(page, shop);
  const checkoutPath = new URL(page.url()).pathname;
  // The link, token and all, as the shop API gives it while the checkout is
  // open: what a customer might forward.
  const link = (await checkoutAtPayonce(stack.url, checkoutId)).next_url ?? '';
  expect(link, 'the token is in the link, after the #').toMatch(/#[\w-]{43}$/);
  // The page takes the token out of the address bar once it has used it.
  expect(new URL(page.url()).hash).toBe('');

  const other = await browser.newContext();
  const otherPage = await other.newPage();
  await otherPage.goto(link);
  await expect(otherPage.getByTestId('link-used')).toBeVisible();
  await expect(otherPage.getByTestId('pay')).toHaveCount(0);
  await expect(otherPage.getByText('Human Acts')).toHaveCount(0);
  await other.close();

  expect(new URL(page.url()).pathname).toBe(checkoutPath);
  const confirm = await payByCard(page, 'approve');
  await confirm.expectState('paid');
  // The token went in claims' bodies only: no line any server printed holds it.
  const token = link.split('#')[1];
  expect(stack.logs.server.filter((line) => line.includes(token))).toEqual([]);
});

test('a checkout left unpaid past its time expires: the page says so and nothing can be paid', async ({
  page,
  stack,
}) => {
  const shop = shopOf(stack);
  const checkout = await createCheckout(stack.url, `${shop.url}/orders`, { expires_in: 2 });
  await page.goto(checkout.next_url);
  await expect(page.getByTestId('pay')).toBeVisible();
  await expect(page.getByTestId('checkout-expired')).toBeVisible({ timeout: 15_000 });
  await expect(page.getByTestId('pay')).toHaveCount(0);
  await expect(page.getByTestId('back-to-shop')).toHaveAttribute('href', `${shop.url}/orders`);
  expect((await stack.pgStats()).charges_by_order[checkout.id] ?? 0).toBe(0);
});

test('the shop refunds a paid order through the API, and its page and the PG agree', async ({ page, stack }) => {
  const shop = shopOf(stack);
  await buyAtTheShop(page, shop);
  const confirm = await payByCard(page, 'approve');
  await confirm.expectState('paid');
  await backToTheShop(page, shop);
  await expect(shopStatus(page)).toHaveAttribute('data-status', 'PAID');
  await page.getByTestId('refund').click();
  await expect(shopStatus(page)).toHaveAttribute('data-status', 'CANCELED');
  expect((await stack.pgPaymentFor(confirm.orderId))?.status).toBe('CANCELED');
});

test('closing the card window: nothing charged, and the way back to the shop instead of the cart', async ({
  page,
  stack,
}) => {
  const shop = shopOf(stack);
  const checkoutId = await buyAtTheShop(page, shop);
  await page.getByTestId('pay').click();
  await (await PgWindow.opened(page)).close();
  await expect(page.getByTestId('charge-status')).toHaveText('Nothing was charged.');
  await expect(page.getByText('You closed the payment window before paying.')).toBeVisible();
  await expect(page.getByText('Your cart is as you left it')).toHaveCount(0);
  await backToTheShop(page, shop);
  await expect(shopStatus(page)).toHaveAttribute('data-status', /^(CREATED|FAILED)$/);
  expect((await stack.pgStats()).charges_by_order[checkoutId] ?? 0).toBe(0);
});

test('the shop is told by a signed event; an operator sees it delivered and sends it again, and the shop acts on it once', async ({
  page,
  context,
  stack,
}) => {
  const shop = shopOf(stack);
  const checkoutId = await buyAtTheShop(page, shop);
  const confirm = await payByCard(page, 'approve');
  await confirm.expectState('paid');
  // The shop's own record comes from the event, not from the customer's return.
  await expect
    .poll(async () => (await shop.orders()).find((order) => order.checkout_id === checkoutId)?.status)
    .toBe('PAID');
  const deliveriesOf = async () => (await shop.deliveries()).filter((delivery) => delivery.body.includes(checkoutId));
  await expect.poll(async () => (await deliveriesOf()).length).toBe(1);

  const console = await context.newPage();
  await console.goto(`${stack.adminUrl}/admin/`);
  await console.locator('#token').fill(OPERATOR_TOKEN);
  await console.getByRole('button', { name: 'Use' }).click();
  await expect(console.locator('#signed-in')).toContainText('Signed in');
  await console.locator('#status').selectOption('PAID');
  await console.getByRole('button', { name: 'List' }).click();
  await console.locator('#orders tr', { hasText: checkoutId }).getByRole('button').click();
  const event = console.locator('#events tbody tr', { hasText: 'checkout.paid' });
  await expect(event).toContainText('DELIVERED');
  await expect(console.locator('#event-sends tbody tr')).toContainText('HTTP 200');

  console.once('dialog', (dialog) => dialog.accept());
  await event.getByRole('button').click();
  await expect(console.locator('#message')).toContainText('goes to its shop again');
  // The shop gets it twice, under one id, and its order stays as it was.
  await expect.poll(async () => (await deliveriesOf()).length).toBe(2);
  const ids = new Set((await deliveriesOf()).map((delivery) => delivery.webhook_id));
  expect(ids.size, 'one event, sent twice').toBe(1);
  expect((await shop.orders()).find((order) => order.checkout_id === checkoutId)?.status).toBe('PAID');
  await expect(console.locator('#audit')).toContainText('resend_event');
});
