// The sample shop (`payonce-shop`) beside a stack's order server: a shop with a
// backend of its own, whose customers pay on payonce's page. Its key is a test
// key; the order servers know it by its digest from the shops file written here.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { Running, start, stop } from './processes';

/** The sample shop's API key in every stack. */
export const SHOP_KEY = 'sk_e2e_sample_bookshop_0123456789abcdefghijkl';
/** The secret payonce signs the shop's events with, and the shop verifies them by
 *  (Standard Webhooks: `whsec_` and base64 of 32 bytes). */
export const SHOP_EVENTS_SECRET = `whsec_${Buffer.from('e2e sample bookshop events secret').toString('base64')}`;
/** How the shop's checkouts' ids begin (`order_id_prefix` in the shops file). */
export const SHOP_CHECKOUT_PREFIX = 'ord_books_';

/** Ports below Linux's ephemeral range (32768-60999), which the kernel never
 *  gives an outgoing connection: a port picked there stays free until the
 *  shop binds it. One from the ephemeral range (`listen(0)`) was taken twice in
 *  one run, by some process's outgoing connection, while the order server
 *  started. */
const NAMED_PORTS = { first: 20_000, last: 32_000 };

/** A port free now, for a process that must be named before it starts (the
 *  shop's origin goes into the order servers' shops file), drawn at random
 *  below the ephemeral range, so that no outgoing connection takes it before
 *  the process binds it. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const port = NAMED_PORTS.first + Math.floor(Math.random() * (NAMED_PORTS.last - NAMED_PORTS.first));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port from ${NAMED_PORTS.first} to ${NAMED_PORTS.last} in 50 draws`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** Writes the shops file that names the sample shop at `port`, and returns its path. */
export function writeShopsFile(dir: string, port: number): string {
  const digest = createHash('sha256').update(SHOP_KEY).digest('hex');
  const file = path.join(dir, 'shops.toml');
  writeFileSync(
    file,
    [
      '[[shop]]',
      'id = "bookshop"',
      'name = "Sample Bookshop"',
      'name_ko = "샘플 책방"',
      `order_id_prefix = "${SHOP_CHECKOUT_PREFIX}"`,
      `return_origins = ["http://127.0.0.1:${port}"]`,
      'pay_with = ["toss", "kakaopay"]',
      `key_digests = ["${digest}"]`,
      `events_url = "http://127.0.0.1:${port}/payonce/events"`,
      'events_secret_file = "shop-events.secret"',
      '',
    ].join('\n'),
  );
  writeFileSync(path.join(dir, 'shop-events.secret'), `${SHOP_EVENTS_SECRET}\n`);
  return file;
}

/** The shop's own view of one of its orders (`GET /api/orders`). */
export interface ShopOrder {
  id: string;
  checkout_id: string | null;
  amount: number;
  status: string;
}

/** One delivery of an event, as the shop received it (`GET /api/deliveries`). */
export interface ShopDelivery {
  webhook_id: string;
  webhook_timestamp: string;
  webhook_signature: string;
  body: string;
  received_at_ms: number;
}

export class SampleShop {
  private constructor(
    private running: Running,
    readonly port: number,
    private readonly dir: string,
  ) {}

  /** Starts the shop on `port`, selling through the order server at `payonceUrl`. */
  static async start(dir: string, port: number, payonceUrl: string): Promise<SampleShop> {
    return new SampleShop(await SampleShop.run(dir, port, payonceUrl), port, dir);
  }

  private static run(dir: string, port: number, payonceUrl: string): Promise<Running> {
    const keyFile = path.join(dir, 'shop.key');
    writeFileSync(keyFile, `${SHOP_KEY}\n`);
    const url = `http://127.0.0.1:${port}`;
    return start(
      'payonce-shop',
      [
        '--listen', `127.0.0.1:${port}`,
        '--public-url', url,
        '--payonce-url', payonceUrl,
        '--api-key-file', keyFile,
        '--events-secret-file', path.join(dir, 'shop-events.secret'),
        '--database', path.join(dir, 'shop.sqlite3'),
      ],
      path.join(dir, 'shop.log'),
    );
  }

  get url(): string {
    return this.running.url;
  }

  /** Starts it again (same port, same database) for an order server that moved to `payonceUrl`. */
  async restart(payonceUrl: string): Promise<void> {
    await stop(this.running);
    this.running = await SampleShop.run(this.dir, this.port, payonceUrl);
  }

  stop(): Promise<void> {
    return stop(this.running);
  }

  /** Every delivery of an event the shop took, duplicates included, as it came. */
  async deliveries(): Promise<ShopDelivery[]> {
    const response = await fetch(`${this.url}/api/deliveries`);
    if (!response.ok) throw new Error(`the sample shop lists its deliveries: ${response.status}`);
    return response.json();
  }

  /** Every order of the shop, as its own table has it. */
  async orders(): Promise<ShopOrder[]> {
    const response = await fetch(`${this.url}/api/orders`);
    if (!response.ok) throw new Error(`the sample shop lists its orders: ${response.status}`);
    return response.json();
  }
}

/** The shop API's view of a checkout, with the shop's key. */
export async function checkoutAtPayonce(
  payonceUrl: string,
  checkoutId: string,
): Promise<{ status: string; amount: number; amount_refunded: number; next_url?: string }> {
  const response = await fetch(`${payonceUrl}/v1/checkouts/${encodeURIComponent(checkoutId)}`, {
    headers: { authorization: `Bearer ${SHOP_KEY}` },
  });
  if (!response.ok) throw new Error(`payonce's shop API answered ${response.status} for ${checkoutId}: ${await response.text()}`);
  return response.json();
}

/** Creates a checkout through the shop API as the sample shop's backend would,
 *  with `extra` fields over a small one; returns the shop API's answer. */
export async function createCheckout(
  payonceUrl: string,
  returnUrl: string,
  extra: Record<string, unknown> = {},
): Promise<{ id: string; next_url: string; status: string }> {
  const response = await fetch(`${payonceUrl}/v1/checkouts`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${SHOP_KEY}`,
      'idempotency-key': crypto.randomUUID(),
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      reference: `journey-${Date.now()}`,
      name: { en: 'One novel', ko: '소설 한 권' },
      lines: [{ name: 'Human Acts', quantity: 1, unit_amount: 14_000 }],
      amount: 14_000,
      return_url: returnUrl,
      ...extra,
    }),
  });
  if (response.status !== 201) throw new Error(`the shop API refused the checkout: ${await response.text()}`);
  return response.json();
}
