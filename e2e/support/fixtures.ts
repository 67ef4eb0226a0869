// The fixtures every journey uses: a worker's own stack, a log of the confirm
// POSTs the browser sent, a log of the page's data-payment-state values, and
// the invariants checked after every test.
import { Request, test as base, expect } from '@playwright/test';
import { Stack, Timings, defaultPgConfig } from './stack';

/** Every confirm POST the browser sent: counted from the network, timed by the page. */
export class ConfirmPosts {
  readonly sent: string[] = [];
  /** When the page called fetch for each confirm, on the page's clock. */
  readonly fetchedAt: number[] = [];
  /** POSTs a test's route dropped before they reached the server. */
  droppedBeforeServer = 0;

  record(request: Request): void {
    if (request.method() === 'POST' && isConfirm(request.url())) this.sent.push(request.url());
  }

  get count(): number {
    return this.sent.length;
  }

  /** How many confirm POSTs the browser sent for each order. */
  get perOrder(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const url of this.sent) {
      const orderId = decodeURIComponent(new URL(url).pathname.split('/')[3]);
      counts.set(orderId, (counts.get(orderId) ?? 0) + 1);
    }
    return counts;
  }

  /** When the (first) confirm POST left the page. */
  get firstAt(): number {
    expect(this.fetchedAt.length, 'the page sent a confirm POST').toBeGreaterThan(0);
    return this.fetchedAt[0];
  }
}

function isConfirm(url: string): boolean {
  return /\/api\/orders\/[^/]+\/confirm$/.test(new URL(url).pathname);
}

/** The confirm page's `data-payment-state` values, as the page showed them. */
export class PaymentStates {
  readonly seen: { state: string; at: number; document: string; orderId: string }[] = [];

  record(state: string, document: string, at: number, orderId: string): void {
    this.seen.push({ state, at, document, orderId });
  }

  /** The last state the page showed for each order. */
  get lastByOrder(): Map<string, string> {
    return new Map(this.seen.map((entry) => [entry.orderId, entry.state]));
  }

  /** The states in order as the page showed them; a reload shows its first state again. */
  get sequence(): string[] {
    return this.seen.map((entry) => entry.state);
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
}

// Runs in every page before its own scripts. Reports each change of
// data-payment-state ('starting' lasts one request and is in no journey's story)
// and each confirm fetch, timed on the page's own monotonic clock so that
// "checking 15 s after the POST" is measured where it happens.
const pageRecorder = `(() => {
  const now = () => performance.timeOrigin + performance.now();
  const documentId = Math.random().toString(36).slice(2);
  let last = null;
  const check = () => {
    const state = document.querySelector('[data-payment-state]')?.getAttribute('data-payment-state') ?? null;
    const orderId = new URLSearchParams(location.search).get('orderId') ?? '';
    if (state && state !== last && state !== 'starting') window.__recordPaymentState(state, documentId, now(), orderId);
    last = state;
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-payment-state'] });
  const fetch = window.fetch;
  window.fetch = function (input, init) {
    const request = input instanceof Request ? input : null;
    const url = new URL(request ? request.url : String(input), location.href);
    const method = (init && init.method) || (request && request.method) || 'GET';
    if (method === 'POST' && /\\/api\\/orders\\/[^/]+\\/confirm$/.test(url.pathname)) window.__recordConfirmFetch(now());
    return fetch.apply(this, arguments);
  };
})();`;

type WorkerFixtures = { timings: Timings; stack: Stack };
type TestFixtures = {
  confirmPosts: ConfirmPosts;
  states: PaymentStates;
  /** Off only where a run is not a test (the README's screenshots). */
  checkInvariants: boolean;
  invariants: void;
};

export const test = base.extend<TestFixtures, WorkerFixtures>({
  timings: ['fast', { scope: 'worker', option: true }],
  checkInvariants: [true, { option: true }],
  stack: [
    async ({ timings }, use) => {
      const stack = await Stack.start(timings);
      await use(stack);
      await stack.stop();
    },
    { scope: 'worker' },
  ],
  baseURL: async ({ stack }, use) => use(stack.url),
  confirmPosts: [
    async ({ context }, use) => {
      const posts = new ConfirmPosts();
      context.on('request', (request) => posts.record(request));
      await context.exposeFunction('__recordConfirmFetch', (at: number) => posts.fetchedAt.push(at));
      await use(posts);
    },
    { auto: true },
  ],
  states: [
    async ({ context }, use) => {
      const states = new PaymentStates();
      await context.exposeFunction(
        '__recordPaymentState',
        (state: string, document: string, at: number, orderId: string) => states.record(state, document, at, orderId),
      );
      await context.addInitScript(pageRecorder);
      await use(states);
    },
    { auto: true },
  ],
  // After every test:
  // - the browser sent at most one confirm POST per order, and the server received
  //   exactly the POSTs the browser sent;
  // - every order has settled (a payment left in progress is waited for, briefly);
  // - the PG charged each order exactly as the server reports it: PAID once, never
  //   otherwise, and nothing twice;
  // - the page's final word on an order is the server's.
  invariants: [
    async ({ stack, context, confirmPosts, states, checkInvariants }, use) => {
      await stack.configurePg(defaultPgConfig);
      const serverBefore = await stack.serverConfirmRequests();
      const serverProcess = stack.server.process;
      await use();
      if (!checkInvariants) return;

      for (const [orderId, posts] of confirmPosts.perOrder) {
        expect(posts, `confirm POSTs the browser sent for ${orderId}`).toBe(1);
      }
      // A restarted server starts its counters again; the browser's count still holds.
      if (stack.server.process === serverProcess) {
        expect(await stack.serverConfirmRequests(), 'confirm POSTs the server received').toBe(
          serverBefore + confirmPosts.count - confirmPosts.droppedBeforeServer,
        );
      }

      type Listed = { order_id: string; status: string };
      const listOrders = async (): Promise<Listed[]> =>
        (await context.request.get(`${stack.url}/api/orders`)).json();
      await expect
        .poll(async () => (await listOrders()).filter((order) => ['PENDING', 'UNKNOWN'].includes(order.status)), {
          message: 'every payment settles',
          timeout: 30_000,
        })
        .toEqual([]);
      const orders = await listOrders();
      const stats = await stack.pgStats();
      const ours = new Set(orders.map((order) => order.order_id));
      expect(stats.double_charges.filter((orderId) => ours.has(orderId)), 'no order was charged twice').toEqual([]);
      for (const order of orders) {
        const charges = stats.charges_by_order[order.order_id] ?? 0;
        expect(charges, `${order.status} order ${order.order_id}`).toBe(order.status === 'PAID' ? 1 : 0);
      }

      for (const [orderId, state] of states.lastByOrder) {
        const order = orders.find((candidate) => candidate.order_id === orderId);
        if (state !== 'paid' && state !== 'failed') continue;
        expect(order, `the page showed ${state} for ${orderId}, an order of this customer`).toBeDefined();
        // A confirm that never reached the server leaves its order CREATED: nothing charged.
        const expected = state === 'paid' ? ['PAID'] : ['FAILED', 'CREATED'];
        expect(expected, `the page showed ${state} for ${orderId}`).toContain(order!.status);
      }
    },
    { auto: true },
  ],
});

export { expect };
