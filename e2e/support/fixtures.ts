// The fixtures every journey uses: a worker's own stack; every browser context
// and API request context of the test, watched (the confirm POSTs, the server's
// answers about orders, the page's data-payment-state values); and the
// invariants, checked after every test over every order the test touched.
import {
  APIRequestContext,
  BrowserContext,
  Page,
  Request,
  Response,
  TestInfo,
  test as base,
  expect,
} from '@playwright/test';
import { Webhook } from 'standardwebhooks';
import { SHOP_EVENTS_SECRET, SHOP_KEY, type ShopDelivery } from './shop';
import { LogMark, Stack, Timings, Topology, defaultPgConfig } from './stack';

const CONFIRM_PATH = /^\/api\/orders\/([^/]+)\/confirm$/;
/** A request about one order: its check, its confirm, closing it. */
const ORDER_PATH = /^\/api\/orders\/([^/]+)(?:\/confirm|\/abandon)?$/;
/** How the server (with its default `--order-id-prefix`) begins its order ids. */
const SHOP_ORDER_ID_PREFIX = 'ord_';

function orderIdIn(url: string, pattern: RegExp): string | null {
  const id = new URL(url).pathname.match(pattern)?.[1];
  return id === undefined || id === 'recent' ? null : decodeURIComponent(id);
}

/** One confirm POST, and when it ended (answered or failed) on the test's clock. */
type Post = { orderId: string; endedAt?: number };

/** Every confirm POST the browser sent, in every context of the test. */
export class ConfirmPosts {
  readonly sent: Post[] = [];
  /** When the page called fetch for each confirm, on the page's clock. */
  readonly fetchedAt: number[] = [];
  /** POSTs a test's route dropped before they reached the server. */
  droppedBeforeServer = 0;
  private readonly out = new Map<Request, Post>();

  record(request: Request): void {
    const orderId = request.method() === 'POST' ? orderIdIn(request.url(), CONFIRM_PATH) : null;
    if (orderId === null) return;
    const post: Post = { orderId };
    this.sent.push(post);
    this.out.set(request, post);
  }

  ended(request: Request): void {
    const post = this.out.get(request);
    if (post) post.endedAt = Date.now();
  }

  get count(): number {
    return this.sent.length;
  }

  /** How many confirm POSTs the browser sent for each order. */
  get perOrder(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { orderId } of this.sent) counts.set(orderId, (counts.get(orderId) ?? 0) + 1);
    return counts;
  }

  /** When the (first) confirm POST left the page. */
  get firstAt(): number {
    expect(this.fetchedAt.length, 'the page sent a confirm POST').toBeGreaterThan(0);
    return this.fetchedAt[0];
  }

  /** POSTs that had not ended when an order server began to die (`killedAt`):
   *  that server may or may not have received them. When a POST was sent plays
   *  no part: the browser reports a request only after it has left, and on a
   *  busy machine that report can come after a kill the POST was caught in. */
  outWhenKilled(killedAt: number[]): number {
    return this.sent.filter((post) => killedAt.some((at) => (post.endedAt ?? Infinity) >= at)).length;
  }
}

/** One `data-payment-state` value as a page showed it: `at` on the page's clock,
 *  `seenAt` on the test's (to order it among the server's answers). */
type Shown = { state: string; at: number; document: string; orderId: string; page: Page; seenAt: number };

/** The confirm page's `data-payment-state` values, as each page showed them. */
export class PaymentStates {
  readonly seen: Shown[] = [];

  record(page: Page, state: string, document: string, at: number, orderId: string): void {
    this.seen.push({ state, at, document, orderId, page, seenAt: Date.now() });
  }

  /** The states in order as the pages showed them; a reload shows its first state again. */
  get sequence(): string[] {
    return this.seen.map((entry) => entry.state);
  }

  /** The states one page (tab) showed, in order. */
  of(page: Page): string[] {
    return this.seen.filter((entry) => entry.page === page).map((entry) => entry.state);
  }

  /** When `state` was first shown. */
  firstAt(state: string): number {
    const entry = this.seen.find((candidate) => candidate.state === state);
    expect(entry, `the page showed ${state}`).toBeDefined();
    return entry!.at;
  }

  /** The states each page load showed, in order. */
  get byPageLoad(): string[][] {
    const loads = new Map<string, string[]>();
    for (const entry of this.seen) loads.set(entry.document, [...(loads.get(entry.document) ?? []), entry.state]);
    return [...loads.values()];
  }

  /** The last state of each page load. */
  get lastOfEachLoad(): Shown[] {
    const last = new Map<string, Shown>();
    for (const entry of this.seen) last.set(entry.document, entry);
    return [...last.values()];
  }
}

/** What the server told a page about an order: its status, `NOT_FOUND`, or nothing definite (null). */
type Answer = string | null;

/** The server's answers to each page about orders (checks, confirms, closing), in arrival order. */
export class OrderAnswers {
  private readonly seen: { page: Page | null; orderId: string; seenAt: number; answer: Promise<Answer> }[] = [];

  record(response: Response): void {
    const orderId = orderIdIn(response.url(), ORDER_PATH);
    if (orderId === null) return;
    let page: Page | null = null;
    try {
      page = response.frame().page();
    } catch {
      // Not from a page (a service worker): no page's word rests on it.
    }
    this.seen.push({ page, orderId, seenAt: Date.now(), answer: answerIn(response) });
  }

  /** The last answer about `orderId` that reached `page` before `before`. */
  async lastTo(page: Page, orderId: string, before: number): Promise<Answer | undefined> {
    const earlier = this.seen.filter((entry) => entry.page === page && entry.orderId === orderId && entry.seenAt <= before);
    return earlier.length === 0 ? undefined : earlier[earlier.length - 1].answer;
  }
}

async function answerIn(response: Response): Promise<Answer> {
  const body = await response.json().catch(() => null);
  if (typeof body !== 'object' || body === null) return null;
  if (typeof body.status === 'string') return body.status;
  if (typeof body.order?.status === 'string') return body.order.status;
  return body.code === 'ORDER_NOT_FOUND' ? 'NOT_FOUND' : null;
}

const SETTLED = ['PAID', 'FAILED', 'CANCELED', 'PARTIALLY_REFUNDED', 'CANCEL_REQUESTED'];
/** A charge, and what it may have become since: refunds asked for by the customer or the shop. */
const CHARGED = ['PAID', 'CANCEL_REQUESTED', 'CANCELED', 'PARTIALLY_REFUNDED'];

// Runs in every page before its own scripts. Reports each change of
// data-payment-state ('starting' lasts a request or two and is in no journey's
// story) and each confirm fetch, timed on the page's own monotonic clock so that
// "checking 15 s after the POST" is measured where it happens. Each report
// reaches the test later than it happens (the page's event is queued, and the
// binding's call crosses to the test): window.__reportsDelivered() settles once
// every report made so far has been recorded, so the invariants read them all.
const pageRecorder = `(() => {
  const now = () => performance.timeOrigin + performance.now();
  const documentId = Math.random().toString(36).slice(2);
  const pending = new Set();
  const report = (call) => {
    pending.add(call);
    call.finally(() => pending.delete(call));
  };
  window.__reportsDelivered = async () => {
    // One more turn of the page's tasks: an event queued before this call is dispatched first.
    await new Promise((resolve) => setTimeout(resolve, 0));
    await Promise.allSettled([...pending]);
  };
  let last = null;
  const check = () => {
    const state = document.querySelector('[data-payment-state]')?.getAttribute('data-payment-state') ?? null;
    const orderId = new URLSearchParams(location.search).get('orderId') ?? '';
    if (state && state !== last && state !== 'starting') report(window.__recordPaymentState(state, documentId, now(), orderId));
    last = state;
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-payment-state'] });
  document.addEventListener('securitypolicyviolation', (event) =>
    report(window.__recordCspViolation(event.violatedDirective + ' blocked ' + (event.blockedURI || 'inline') + ' at ' +
      location.pathname + ' (' + event.sourceFile + ':' + event.lineNumber + ')')));
  const fetch = window.fetch;
  window.fetch = function (input, init) {
    const request = input instanceof Request ? input : null;
    const url = new URL(request ? request.url : String(input), location.href);
    const method = (init && init.method) || (request && request.method) || 'GET';
    if (method === 'POST' && /\\/api\\/orders\\/[^/]+\\/confirm$/.test(url.pathname)) report(window.__recordConfirmFetch(now()));
    return fetch.apply(this, arguments);
  };
})();`;

const CUSTOMER_COOKIE = 'payonce_customer';

/** Everything a test did through browsers and API clients: who the customers
 *  were, what the pages sent, showed, and were told. */
export class Observed {
  readonly confirmPosts = new ConfirmPosts();
  readonly states = new PaymentStates();
  readonly answers = new OrderAnswers();
  /** What the shop's Content-Security-Policy blocked in any page: must stay empty. */
  readonly cspViolations: string[] = [];
  private readonly contexts: BrowserContext[] = [];
  private readonly apis: APIRequestContext[] = [];
  /** Customer cookies of contexts closed during the test. */
  private readonly closedCustomers: string[] = [];

  async watch(context: BrowserContext): Promise<void> {
    this.contexts.push(context);
    context.on('request', (request) => this.confirmPosts.record(request));
    context.on('requestfinished', (request) => this.confirmPosts.ended(request));
    context.on('requestfailed', (request) => this.confirmPosts.ended(request));
    context.on('response', (response) => this.answers.record(response));
    await context.exposeBinding('__recordConfirmFetch', (_source, at: number) => this.confirmPosts.fetchedAt.push(at));
    await context.exposeBinding('__recordCspViolation', (_source, violation: string) => this.cspViolations.push(violation));
    await context.exposeBinding(
      '__recordPaymentState',
      ({ page }, state: string, document: string, at: number, orderId: string) =>
        this.states.record(page, state, document, at, orderId),
    );
    await context.addInitScript(pageRecorder);
    // Its customer is read before it goes: the invariants look at every customer's orders.
    const close = context.close.bind(context);
    context.close = async (options) => {
      this.closedCustomers.push(...customerIn(await context.cookies().catch(() => [])));
      return close(options);
    };
  }

  watchApi(request: APIRequestContext): void {
    this.apis.push(request);
  }

  /** Once every page still open has had what it reported so far recorded here. */
  async reportsDelivered(): Promise<void> {
    type Reporting = { __reportsDelivered?: () => Promise<void> };
    const pages = this.contexts.flatMap((context) => context.pages());
    const delivered = (page: Page) => page.evaluate(() => (window as Reporting).__reportsDelivered?.());
    // A page closing or navigating away meanwhile has nothing more to deliver.
    await Promise.all(pages.map((page) => delivered(page).catch(() => undefined)));
  }

  /** Every customer id the test's browsers and API clients were given. */
  async customers(): Promise<string[]> {
    const ids = [...this.closedCustomers];
    for (const context of this.contexts) ids.push(...customerIn(await context.cookies().catch(() => [])));
    for (const api of this.apis) ids.push(...customerIn((await api.storageState().catch(() => ({ cookies: [] }))).cookies));
    return [...new Set(ids)];
  }
}

function customerIn(cookies: { name: string; value: string }[]): string[] {
  return cookies.filter((cookie) => cookie.name === CUSTOMER_COOKIE).map((cookie) => cookie.value);
}

type Listed = { order_id: string; status: string };

async function ordersOf(stack: Stack, customer: string): Promise<Listed[]> {
  const list = () => fetch(`${stack.url}/api/orders`, { headers: { cookie: `${CUSTOMER_COOKIE}=${customer}` } });
  let response = await list();
  // A journey may give the shop a small read limit: the customer is asked to
  // come back after Retry-After, as the page does.
  for (let refused = 0; response.status === 429 && refused < 10; refused++) {
    await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after') ?? '1') * 1000));
    response = await list();
  }
  expect(response.ok, `the server lists customer ${customer}'s orders`).toBe(true);
  return response.json();
}

/** Where a test started from: counters (at either PG) and logs are compared with this. */
/** Where the stack stood when the test began: its PGs' charges, its logs, and the time (`Date.now()`). */
type Start = { charges: Record<string, number>; logs: LogMark; at: number };

/** Charges by order at both PGs together: an order is paid through one of them. */
async function chargesAtBothPgs(stack: Stack): Promise<{ charges: Record<string, number>; doubled: string[] }> {
  const [toss, kakaopay] = await Promise.all([stack.pgStats(), stack.kakaopayStats()]);
  const charges: Record<string, number> = { ...toss.charges_by_order };
  for (const [orderId, count] of Object.entries(kakaopay.charges_by_order)) charges[orderId] = (charges[orderId] ?? 0) + count;
  const doubled = [...toss.double_charges, ...kakaopay.double_charges];
  // One charge at each PG is a double charge too.
  for (const orderId of Object.keys(kakaopay.charges_by_order)) if (toss.charges_by_order[orderId]) doubled.push(orderId);
  return { charges, doubled };
}

/** How long a payment still in progress after a test is given to settle. In the
 *  fast timings, past recovery's longest pause between two looks at a payment
 *  (15 recovery intervals of 1 s), with room to spare. */
function settleWait(timings: Timings): number {
  return timings === 'fast' ? 25_000 : 30_000;
}

/**
 * The invariants, over every order the test's customers have and every order the
 * server created or the PG was asked to confirm or charged during the test:
 * - the browsers sent at most one confirm POST per order, and the server (across
 *   restarts) received exactly the POSTs they sent that could reach it (in a
 *   cluster, a POST cut off by a killed server may arrive again at another);
 * - every payment has settled (one still in progress is waited for, briefly);
 * - every refund asked for has gone out (CANCEL_REQUESTED is waited for, as a payment is);
 * - the order agrees with the PG's ledger: PAID is charged once (DONE), a refunded
 *   order was charged once and cancelled at the PG, and anything else was never charged;
 * - the shop's Content-Security-Policy blocked nothing in any page;
 * - each page's last word is the server's: paid, refunded and failed only for
 *   orders the server has so (failed also for a CREATED order whose confirm the
 *   server refused with a code); unresolved only when the last answer the page got
 *   about the order was not final; elsewhere only when that answer was "no such
 *   order" for this browser.
 */
export async function assertInvariants(
  stack: Stack,
  observed: Observed,
  start: Start,
  settleWithin = settleWait(stack.timings),
): Promise<void> {
  const { confirmPosts, states, answers } = observed;
  await observed.reportsDelivered();
  expect(observed.cspViolations, "what the shop's Content-Security-Policy blocked").toEqual([]);
  for (const [orderId, posts] of confirmPosts.perOrder) {
    expect(posts, `confirm POSTs the browser sent for ${orderId}`).toBe(1);
  }

  const customers = await observed.customers();
  const listOrders = async () => (await Promise.all(customers.map((customer) => ordersOf(stack, customer)))).flat();
  // One deadline for both: a refund waited for after a payment gets what is left of it.
  const settledBy = Date.now() + settleWithin;
  const left = () => Math.max(settledBy - Date.now(), 1);
  const inState = async (statuses: string[]) =>
    (await listOrders()).filter((order) => statuses.includes(order.status)).map((order) => order.order_id);
  await expect
    .poll(() => inState(['PENDING', 'UNKNOWN']), { message: 'every payment settles', timeout: left() })
    .toEqual([]);
  await expect
    .poll(() => inState(['CANCEL_REQUESTED']), { message: 'every refund asked for goes out', timeout: left() })
    .toEqual([]);
  // Counted as they arrive (each server logs a confirm before anything else, so
  // one whose server is killed mid-request is on record too), across restarts.
  // A POST still out when a server was killed may not have reached it, or (in a
  // cluster) may reach another server again, sent by the browser or the balancer
  // unseen by the page: with the same idempotency key, so it is answered as the
  // same payment.
  // Only a kill during this test can catch one of its POSTs: the worker's
  // stack remembers kills of earlier tests too, and counting those let every
  // later POST off the lower bound below (journey 19 found it).
  const outWhenKilled = confirmPosts.outWhenKilled(stack.killedAt.filter((at) => at >= start.at));
  const reachable = confirmPosts.count - confirmPosts.droppedBeforeServer;
  const resentAtMost = stack.servers.length > 1 ? outWhenKilled : 0;
  const received = () => stack.confirmsReceivedSince(start.logs);
  await expect
    .poll(received, { message: 'confirm POSTs the server received: at least those that could reach it', timeout: 5_000 })
    .toBeGreaterThanOrEqual(reachable - outWhenKilled);
  expect(
    received(),
    'confirm POSTs the server received: no more than the browser sent (in a cluster, resent ones included)',
  ).toBeLessThanOrEqual(reachable + resentAtMost);
  const orders = new Map((await listOrders()).map((order) => [order.order_id, order]));

  const { charges: chargesByOrder, doubled } = await chargesAtBothPgs(stack);
  const logs = stack.logs.since(start.logs);
  // An order an earlier test created and left unsettled on purpose (tests/19) may be
  // settled by recovery now: it is that test's, not this one's.
  const createdBefore = new Set(matches(stack.logs.server.slice(0, start.logs.server), /order created.*order_id="?([\w-]+)/));
  const seenDuringTest = new Set(
    [
      ...matches(logs.server, /order created.*order_id="?([\w-]+)/),
      ...matches(logs.pg, /routes::confirm: confirm .*order_id="?([\w-]+)/),
      ...matches(logs.kakaopay, /kakaopay ready.*partner_order_id="?([\w-]+)/),
      ...Object.keys(chargesByOrder).filter((id) => chargesByOrder[id] !== start.charges[id]),
    ]
      .filter((orderId) => !createdBefore.has(orderId))
      // Another user's charge of the same PG account (a POS, in journey 25) is
      // not an order of the shop: reconciliation reports it and never touches it.
      .filter((orderId) => orderId.startsWith(SHOP_ORDER_ID_PREFIX)),
  );
  for (const orderId of seenDuringTest) {
    expect(orders.has(orderId), `order ${orderId}, seen by the server or the PG during the test, is a test customer's`)
      .toBe(true);
  }
  expect(doubled.filter((orderId) => orders.has(orderId)), 'no order was charged twice').toEqual([]);
  for (const order of orders.values()) {
    const charges = chargesByOrder[order.order_id] ?? 0;
    const atPg = (await stack.pgPaymentFor(order.order_id)) ?? (await stack.kakaopayPaymentFor(order.order_id));
    const payment = atPg?.status ?? 'none';
    expect({ charges, payment }, `${order.status} order ${order.order_id} in the PG's ledger`).toEqual(
      ledgerFor(order.status, payment),
    );
  }

  await assertShopAgrees(stack, orders);

  for (const last of states.lastOfEachLoad) {
    const order = orders.get(last.orderId);
    const told = await answers.lastTo(last.page, last.orderId, last.seenAt);
    const said = `the page showed ${last.state} for ${last.orderId}`;
    switch (last.state) {
      case 'paid':
        // Paid, and perhaps refunded since, at the customer's or the shop's request.
        expect(CHARGED, said).toContain(order?.status);
        break;
      case 'refunded':
        expect(['CANCELED', 'PARTIALLY_REFUNDED'], said).toContain(order?.status);
        break;
      case 'failed':
        // Not charged only on the server's word: the order is FAILED, or the server
        // refused the confirm itself (a code, and no order), which leaves it CREATED.
        expect(order?.status === 'FAILED' || (order?.status === 'CREATED' && told === null), `${said}: the server has it ${order?.status} and last told the page ${told}`)
          .toBe(true);
        break;
      case 'unresolved':
        expect([...SETTLED, 'NOT_FOUND'].includes(told ?? ''), `${said}, though the server had last told it ${told}`)
          .toBe(false);
        break;
      case 'elsewhere':
        expect(told, `${said}; the server's last answer to it`).toBe('NOT_FOUND');
        break;
    }
  }
}

/** A checkout as the shop API shows it: its status now, and every status it had. */
type ShopApiCheckout = { id: string; status: string; history: { status: string }[] };

/** An event as payonce sends it (`payonce_api::Event`). */
type ShopEvent = { id: string; type: string; data: { checkout_id: string; sequence: number; status: string } };

/** Statuses after which a checkout changes only if someone refunds it. */
const SETTLED_CHECKOUT = ['PAID', 'FAILED', 'EXPIRED', 'CANCELED', 'PARTIALLY_REFUNDED'];

/**
 * The sample shop's view, after every journey: each checkout the shop created
 * is known to payonce with the shop's key, agrees with the PG's ledger (and
 * with the customer's order, when a browser opened it); every event the shop
 * received is signed as Standard Webhooks says, checked with the npm
 * `standardwebhooks` package (a verifier payonce did not write); each
 * checkout's events came in order, each for a status its checkout really had;
 * and once a checkout settled, the shop's own table says what payonce says.
 */
async function assertShopAgrees(stack: Stack, orders: Map<string, Listed>): Promise<void> {
  const shop = stack.shop;
  if (!shop) return;
  const checkouts = new Map<string, ShopApiCheckout>();
  for (const shopOrder of await shop.orders()) {
    if (!shopOrder.checkout_id) continue;
    const response = await fetch(`${stack.url}/v1/checkouts/${encodeURIComponent(shopOrder.checkout_id)}`, {
      headers: { authorization: `Bearer ${SHOP_KEY}` },
    });
    expect(response.status, `payonce knows the shop's checkout ${shopOrder.checkout_id}`).toBe(200);
    const checkout: ShopApiCheckout = await response.json();
    checkouts.set(checkout.id, checkout);
    // EXPIRED is an order closed unpaid: FAILED, to the customer and the ledger.
    const asOrder = checkout.status === 'EXPIRED' ? 'FAILED' : checkout.status;
    const customers = orders.get(checkout.id);
    if (customers) expect(customers.status, `checkout ${checkout.id} as its customer sees it`).toBe(asOrder);
    const atPg = (await stack.pgPaymentFor(checkout.id)) ?? (await stack.kakaopayPaymentFor(checkout.id));
    const charges = (await chargesAtBothPgs(stack)).charges[checkout.id] ?? 0;
    expect({ charges, payment: atPg?.status ?? 'none' }, `${checkout.status} checkout ${checkout.id} in the PG's ledger`)
      .toEqual(ledgerFor(asOrder, atPg?.status ?? 'none'));
    if (SETTLED_CHECKOUT.includes(checkout.status)) {
      // Told by an event, which reaches the shop within moments of the change.
      await expect
        .poll(async () => (await shop.orders()).find((order) => order.id === shopOrder.id)?.status, {
          message: `the shop's own table has its order ${shopOrder.id} as payonce has checkout ${checkout.id}`,
          timeout: 15_000,
        })
        .toBe(checkout.status);
    }
  }
  for (const checkout of checkouts.values()) {
    if (!SETTLED_CHECKOUT.includes(checkout.status)) continue;
    // A shop that was down caught up through the feed; payonce's own send of
    // the same event follows when its retry comes.
    await expect
      .poll(async () => eventsByCheckout(await shop.deliveries()).get(checkout.id)?.at(-1)?.data.status, {
        message: `the last event the shop got for ${checkout.status} checkout ${checkout.id}`,
        timeout: 30_000,
      })
      .toBe(checkout.status);
  }
  for (const [checkoutId, events] of eventsByCheckout(await shop.deliveries())) {
    expect(events.map((event) => event.data.sequence), `checkout ${checkoutId}'s events, in the order they came`)
      .toEqual(events.map((_, index) => index + 1));
    const checkout = checkouts.get(checkoutId);
    if (!checkout) continue;
    const had = checkout.history.map((change) => change.status);
    for (const event of events) {
      expect(had, `${event.type} (${event.id}) tells of a status checkout ${checkoutId} really had`).toContain(event.data.status);
    }
  }
}

/**
 * Every event in `deliveries`, checked and deduplicated: each is signed with the
 * shop's secret (by the npm `standardwebhooks` package's own HMAC: its verify()
 * would also refuse a delivery received over five minutes ago, as an earlier
 * journey's is), its id is its webhook-id, and each time it came it was the
 * same; then each checkout's events, in the order they first came.
 */
function eventsByCheckout(deliveries: ShopDelivery[]): Map<string, ShopEvent[]> {
  const verifier = new Webhook(SHOP_EVENTS_SECRET);
  const firstSeen = new Map<string, ShopEvent>();
  for (const delivery of deliveries) {
    const signedAt = new Date(Number(delivery.webhook_timestamp) * 1000);
    const expected = verifier.sign(delivery.webhook_id, signedAt, delivery.body);
    expect(delivery.webhook_signature.split(' '), `event ${delivery.webhook_id} is signed with the shop's secret`)
      .toContain(expected);
    const event: ShopEvent = JSON.parse(delivery.body);
    expect(event.id, 'webhook-id is the event id').toBe(delivery.webhook_id);
    const before = firstSeen.get(event.id);
    if (before) expect(JSON.stringify(event), `event ${event.id} is the same each time it is sent`).toBe(JSON.stringify(before));
    else firstSeen.set(event.id, event);
  }
  const byCheckout = new Map<string, ShopEvent[]>();
  for (const event of firstSeen.values()) {
    byCheckout.set(event.data.checkout_id, [...(byCheckout.get(event.data.checkout_id) ?? []), event]);
  }
  return byCheckout;
}

/** What the PG must show for an order of `status`, given the payment it shows. */
function ledgerFor(status: string, payment: string): { charges: number; payment: string } {
  switch (status) {
    case 'PAID':
      return { charges: 1, payment: 'DONE' };
    // The PG counts an approval cancelled later as a charge all the same.
    case 'CANCELED':
      return { charges: 1, payment: 'CANCELED' };
    case 'PARTIALLY_REFUNDED':
      return { charges: 1, payment: 'PARTIAL_CANCELED' };
    default:
      // Never charged: no payment, or one that was not approved (ABORTED, or still
      // only chosen in the window).
      return { charges: 0, payment: ['DONE', 'CANCELED', 'PARTIAL_CANCELED'].includes(payment) ? 'not charged' : payment };
  }
}

function matches(lines: string[], pattern: RegExp): string[] {
  return lines.flatMap((line) => line.match(pattern)?.[1] ?? []);
}

/** The invariants after a test, and what the test says about them. */
export class Invariants {
  private expected?: RegExp;
  private settleWithin?: number;

  constructor(
    /** The check, waiting for payments and refunds to settle for `settleWithin` ms (the timings' own wait without). */
    readonly check: (settleWithin?: number) => Promise<void>,
    private readonly testFile: string,
  ) {}

  /** This test breaks an invariant on purpose: the check after it must fail with
   *  a message matching `pattern`, and the test fails if it passes instead. Only
   *  the invariants' own journeys may: anywhere else it would hide a real breach.
   *  A test that leaves a payment unsettled on purpose may have the check wait
   *  less for it (`settleWithin`, in ms) than for a payment that should settle. */
  expectViolation(pattern: RegExp, options: { settleWithin?: number } = {}): void {
    if (!invariantsJourneys.test(this.testFile)) {
      throw new Error(`only ${invariantsJourneys} may expect an invariant to break, not ${this.testFile}`);
    }
    this.expected = pattern;
    this.settleWithin = options.settleWithin;
  }

  async after(testInfo: TestInfo, timings: Timings): Promise<void> {
    // The check waits for payments to settle; its own deadline comes first, so a
    // slow settle fails with what it is, not with the test's timeout.
    const settleWithin = this.settleWithin ?? settleWait(timings);
    testInfo.setTimeout(testInfo.timeout + settleWithin + 30_000);
    const error = await this.check(settleWithin).then(
      () => null,
      (thrown: Error) => thrown,
    );
    if (this.expected === undefined) {
      if (error) throw error;
      return;
    }
    expect(error, `the invariants catch ${this.expected}`).not.toBeNull();
    expect(error!.message).toMatch(this.expected);
  }
}

const docsConfig = /playwright\.docs\.config\.ts$/;

/** Refuses a run that turns the checks off, unless it is the book's screenshots'. */
export function refuseChecksOff(checkInvariants: boolean, configFile: string): void {
  if (!checkInvariants && !docsConfig.test(configFile)) {
    throw new Error('checkInvariants can be turned off only by playwright.docs.config.ts, for the screenshots');
  }
}
const invariantsJourneys = /19-invariants\.spec\.ts$/;

type WorkerFixtures = {
  timings: Timings;
  topology: Topology;
  /** Flags every order server of the worker's stack is given besides the usual ones. */
  serverFlags: string[];
  stack: Stack;
};
type TestFixtures = {
  observed: Observed;
  confirmPosts: ConfirmPosts;
  states: PaymentStates;
  /** Off only where a run is not a test: the book's screenshots (their config says so). */
  checkInvariants: boolean;
  invariants: Invariants;
};

export const test = base.extend<TestFixtures, WorkerFixtures>({
  timings: ['fast', { scope: 'worker', option: true }],
  topology: ['single', { scope: 'worker', option: true }],
  serverFlags: [[], { scope: 'worker', option: true }],
  checkInvariants: [true, { option: true }],
  stack: [
    async ({ timings, topology, serverFlags }, use) => {
      const stack = await Stack.start(timings, topology, serverFlags);
      await use(stack);
      await stack.stop();
    },
    { scope: 'worker' },
  ],
  baseURL: async ({ stack }, use) => use(stack.url),
  // Watches the test's context, and every context the test opens from the browser.
  observed: [
    async ({ context, browser, baseURL }, use) => {
      const observed = new Observed();
      await observed.watch(context);
      const newContext = browser.newContext;
      browser.newContext = async (options) => {
        const opened = await newContext.call(browser, { baseURL, ...options });
        await observed.watch(opened);
        return opened;
      };
      try {
        await use(observed);
      } finally {
        browser.newContext = newContext;
      }
    },
    { auto: true },
  ],
  confirmPosts: async ({ observed }, use) => use(observed.confirmPosts),
  states: async ({ observed }, use) => use(observed.states),
  request: async ({ request, observed }, use) => {
    observed.watchApi(request);
    await use(request);
  },
  invariants: [
    // `request` is set up before (and so torn down after) the check, which reads its customer.
    async ({ stack, observed, checkInvariants, request: _request }, use, testInfo) => {
      refuseChecksOff(checkInvariants, testInfo.config.configFile ?? '');
      await Promise.all([stack.configurePg(defaultPgConfig), stack.configureKakaoPay(defaultPgConfig)]);
      const { charges } = await chargesAtBothPgs(stack);
      const start: Start = { charges, logs: stack.logs.mark(), at: Date.now() };
      const invariants = new Invariants(
        (settleWithin) => assertInvariants(stack, observed, start, settleWithin),
        testInfo.file,
      );
      await use(invariants);
      if (checkInvariants) await invariants.after(testInfo, stack.timings);
    },
    { auto: true },
  ],
});

export { expect };
