// A fake PG and an order server for one Playwright worker, serving the built
// page; or, for journeys about a cluster, three order servers sharing a
// throwaway PostgreSQL behind haproxy (the cluster demo's own scripts start both).
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { expect } from '@playwright/test';
import { Running, binaryPath, repoRoot, scratchDir, start, stop } from './processes';
import { SampleShop, freePort, writeShopsFile } from './shop';

/** One order server on SQLite, or a cluster of three on PostgreSQL behind a load balancer. */
export type Topology = 'single' | 'cluster';
const CLUSTER_SERVERS = 3;

/** Server timings. `real` is the shipped configuration; `fast` shrinks the
 *  checking window for journeys whose subject is not the timing itself. */
export type Timings = 'real' | 'fast';

const serverFlags: Record<Timings, string[]> = {
  // Recovery runs every 5 s instead of every minute so a late charge shows up
  // within the test; it is not a page timing.
  real: ['--recovery-interval', '5s'],
  fast: [
    '--confirm-wait', '3s',
    '--check-interval', '500ms',
    '--max-checks', '12',
    '--pg-connect-timeout', '1s',
    '--pg-read-timeout', '4s',
    '--recovery-interval', '1s',
  ],
};

/** The operators' bearer token of every server a journey starts (the server
 *  refuses one shorter than 32 characters): it signs in as `operator`. */
export const OPERATOR_TOKEN = 'e2e-operator-token-of-32-characters-or-more';

// Flags of servers that have them: the operators' listener on a port of its own
// (workers run side by side) with a token for the console, and no limit per client
// address (every customer of a journey comes from this machine). Older servers get none.
let ownFlags: string[] | undefined;
function optionalServerFlags(): string[] {
  if (ownFlags === undefined) {
    const help = execFileSync(binaryPath('payonce-server'), ['--help']).toString();
    const wanted = [
      ['--admin-listen', '127.0.0.1:0'],
      ['--rate-limit-address', '0'],
      ['--rate-limit-address-reads', '0'],
      ['--rate-limit-new-customers', '0'],
      ['--admin-token', OPERATOR_TOKEN],
    ];
    ownFlags = wanted.filter(([flag]) => help.includes(flag)).flat();
  }
  return ownFlags;
}

/** `flags` (pairs of a flag and its value) less those `overrides` gives again,
 * then `overrides`: the server refuses a flag given twice. */
function overridden(flags: string[], overrides: string[]): string[] {
  const given = new Set(overrides.filter((arg) => arg.startsWith('--')));
  const kept: string[] = [];
  for (let index = 0; index < flags.length; index += 2) {
    if (!given.has(flags[index])) kept.push(flags[index], flags[index + 1]);
  }
  return [...kept, ...overrides];
}

export interface PgStats {
  confirm_requests: number;
  processings: number;
  charges_by_order: Record<string, number>;
  double_charges: string[];
  in_flight: number;
  cancel_requests: number;
  cancel_requests_by_order: Record<string, number>;
  refunds_by_order: Record<string, number>;
  over_refunds: string[];
  faults_injected: { error_500: number; forbidden_consecutive: number };
}

/** The PG's payment for an order, as its lookup shows it (Toss statuses: DONE, ABORTED, CANCELED, ...). */
export interface PgPayment {
  status: string;
  orderId: string;
  totalAmount: number;
}

export type LogMark = { server: number; pg: number; kakaopay: number };

/** What the programs printed (the order servers, Toss's fake PG and KakaoPay's),
 *  line by line, across restarts. */
export class Logs {
  readonly server: string[] = [];
  readonly pg: string[] = [];
  readonly kakaopay: string[] = [];

  /** The lines printed since `mark()` returned `from`. */
  since(from: LogMark): { server: string[]; pg: string[]; kakaopay: string[] } {
    return {
      server: this.server.slice(from.server),
      pg: this.pg.slice(from.pg),
      kakaopay: this.kakaopay.slice(from.kakaopay),
    };
  }

  mark(): LogMark {
    return { server: this.server.length, pg: this.pg.length, kakaopay: this.kakaopay.length };
  }
}

/** The two PGs every stack runs: Toss's fake and KakaoPay's (`fake-pg --api kakaopay`). */
interface Pgs {
  toss: Running;
  kakaopay: Running;
}

/** KakaoPay's test merchant code, the order servers' default. */
const KAKAOPAY_CID = 'TC0ONETIME';

/** KakaoPay's statuses in the words the invariants use for Toss's: what was charged and what is left. */
const KAKAOPAY_AS_TOSS: Record<string, string> = {
  SUCCESS_PAYMENT: 'DONE',
  CANCEL_PAYMENT: 'CANCELED',
  PART_CANCEL_PAYMENT: 'PARTIAL_CANCELED',
};

/** A load balancer in front of a cluster's servers, and the database they share. */
interface Cluster {
  balancer: ChildProcess;
  /** The requests this stack's haproxy logged (one line each), counted. */
  balanced: { requests: number };
  url: string;
  /** The throwaway PostgreSQL's name for scripts/postgres.sh. */
  database: string;
}

/** Runs a function of the repository's scripts (`scripts/NAME.sh`) and returns what it printed. */
function script(source: string, command: string): string {
  const sources = ['lib', source].map((name) => `source ${path.join(repoRoot, 'scripts', `${name}.sh`)}`).join('; ');
  return execFileSync('bash', ['-c', `set -euo pipefail; ${sources}; ${command}`]).toString().trim();
}

export class Stack {
  /** When a server began to be killed (`Date.now()`), for POSTs caught in it. */
  readonly killedAt: number[] = [];

  private constructor(
    readonly timings: Timings,
    readonly dir: string,
    readonly logs: Logs,
    readonly pg: Running,
    /** KakaoPay's fake PG: every stack's servers take KakaoPay too. */
    readonly kakaopay: Running,
    /** The order servers; a killed one stays in its place, stopped. */
    public servers: Running[],
    private readonly db: string,
    private readonly serverFlags: string[],
    /** The sample shop, beside a single server: every journey's invariants read its view. */
    readonly shop?: SampleShop,
    private readonly cluster?: Cluster,
  ) {}

  /** A stack; `serverFlags` are given to every order server (a journey's own limits, say). */
  static async start(timings: Timings, topology: Topology = 'single', serverFlags: string[] = []): Promise<Stack> {
    const dir = scratchDir('payonce-e2e-');
    const logs = new Logs();
    const pg = await start('fake-pg', ['--listen', '127.0.0.1:0'], path.join(dir, 'fake-pg.log'), (line) =>
      logs.pg.push(line),
    );
    const kakaopay = await start(
      'fake-pg',
      ['--listen', '127.0.0.1:0', '--api', 'kakaopay'],
      path.join(dir, 'fake-kakaopay.log'),
      (line) => logs.kakaopay.push(line),
    );
    const pgs = { toss: pg, kakaopay };
    if (topology === 'single') {
      const db = path.join(dir, 'payonce.db');
      const shopPort = await freePort();
      // Checkouts may be made to expire in a second, for the journey about expiry.
      const shops = ['--shops-file', writeShopsFile(dir, shopPort), '--checkout-shortest-open', '1s'];
      const flags = [...shops, ...serverFlags];
      const server = await Stack.startServer(timings, dir, pgs, db, logs, 0, flags);
      const shop = await SampleShop.start(dir, shopPort, server.url);
      return new Stack(timings, dir, logs, pg, kakaopay, [server], db, flags, shop);
    }
    const database = `e2e-${process.pid}`;
    const db = script('postgres', `postgres_start ${database} "" fast >/dev/null && postgres_url ${database}`);
    const port = Number(script('postgres', 'postgres_free_port'));
    const url = `http://127.0.0.1:${port}`;
    const servers = [];
    for (let index = 0; index < CLUSTER_SERVERS; index++) {
      // The PG window sends customers back through the balancer. The page checks
      // for 15 s, not 6: a server killed mid-confirm holds the payment for its
      // confirm's lease (6 s at these timings) before another may ask the PG, and
      // the killed server's POST may come back at once, as a 409 from another
      // server, when the connection is retried under it.
      // Requests come through haproxy, which names their client in X-Forwarded-For.
      const cluster = ['--public-url', url, '--max-checks', '30', '--trusted-proxies', '127.0.0.1'];
      servers.push(await Stack.startServer(timings, dir, pgs, db, logs, index, [...cluster, ...serverFlags]));
    }
    const config = path.join(dir, 'haproxy.cfg');
    script('haproxy', `haproxy_config ${config} ${port} ${servers.map((server) => server.url).join(' ')}`);
    const balancer = spawn('/usr/sbin/haproxy', ['-db', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    const log = createWriteStream(path.join(dir, 'haproxy.log'));
    balancer.stdout!.pipe(log);
    balancer.stderr!.pipe(log);
    const balanced = { requests: 0 };
    createInterface({ input: balancer.stderr! }).on('line', (line) => line.includes(' /healthz ') && balanced.requests++);
    const stack = new Stack(timings, dir, logs, pg, kakaopay, servers, db, serverFlags, undefined, { balancer, balanced, url, database });
    await stack.untilBalanced();
    return stack;
  }

  private static startServer(
    timings: Timings,
    dir: string,
    pgs: Pgs,
    db: string,
    logs: Logs,
    index: number,
    extra: string[] = [],
  ): Promise<Running> {
    return start(
      'payonce-server',
      [
        // Always a port of its own: a restart on the old one could meet a port
        // another worker was given in the meantime.
        '--listen', '127.0.0.1:0',
        '--db', db,
        '--static-dir', process.env.PAYONCE_DIST ?? path.join(repoRoot, 'dist'),
        '--pg-url', pgs.toss.url,
        '--kakaopay-url', pgs.kakaopay.url,
        ...overridden([...serverFlags[timings], ...optionalServerFlags()], extra),
      ],
      path.join(dir, `server-${index}.log`),
      (line) => logs.server.push(line),
    );
  }

  /** Waits until the load balancer reaches every server. */
  /** Until this stack's haproxy answers for its servers. The port was free when
   *  chosen, but another process (another worker's or run's balancer or
   *  PostgreSQL) may have taken it before haproxy bound it: answers that did not
   *  come through this haproxy fail the journey here, by name, instead of sending
   *  it to someone else's shop. */
  private async untilBalanced(): Promise<void> {
    const { balancer, balanced } = this.cluster!;
    for (let tries = 0; tries < 200 && balancer.exitCode === null; tries++) {
      const answers = await Promise.all(
        this.servers.map(() => fetch(`${this.url}/healthz`).then((response) => response.ok, () => false)),
      );
      if (answers.every(Boolean)) {
        await expect
          .poll(() => balanced.requests, { message: `the answers on ${this.url} came through this stack's haproxy` })
          .toBeGreaterThanOrEqual(answers.length);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`haproxy did not reach the order servers (it may not have bound ${this.url}); see ${this.dir}/haproxy.log`);
  }

  /** The order server of a single-server stack. */
  get server(): Running {
    return this.servers[0];
  }

  /** Where customers reach the shop: the server, or the cluster's load balancer.
   *  A single server's changes when it is restarted. */
  get url(): string {
    return this.cluster?.url ?? this.server.url;
  }

  /** The first server's operators' listener, where the console is. */
  get adminUrl(): string {
    const admin = this.server.banner.match(/admin (http:\/\/[\d.:]+)/)?.[1];
    if (!admin) throw new Error('this server has no operators\' listener');
    return admin;
  }

  /** The cluster's server that stored `orderId`'s payment attempt: the one that
   *  took its confirm. Its log line reaches this process through a pipe, after
   *  the server wrote it (later still on a busy machine), so it is waited for. */
  async serverThatStored(orderId: string): Promise<number> {
    const stored = (line: string) =>
      line.includes('payment transition') && line.includes(orderId) && line.includes('from="CREATED"');
    const storedBy = () => this.servers.findIndex((server) => server.lines.some(stored));
    await expect.poll(storedBy, { message: `an order server logs storing ${orderId}'s attempt`, timeout: 10_000 })
      .toBeGreaterThanOrEqual(0);
    return storedBy();
  }

  /** The merchant's secret key, as the fake PG printed it. */
  get pgSecretKey(): string {
    return this.pg.banner.match(/secret key: (\S+)/)?.[1] ?? 'test_sk_payonce_fake_pg_0000';
  }

  /** SIGKILL an order server (the only one, by default): no shutdown code runs,
   *  as in a crash. */
  async killServer(index = 0): Promise<void> {
    this.killedAt.push(Date.now());
    await stop(this.servers[index], 'SIGKILL');
  }

  /** Starts the single order server again on the same database, on a new port (see `url`),
   *  and the sample shop again to sell through it. */
  async restartServer(): Promise<void> {
    const pgs = { toss: this.pg, kakaopay: this.kakaopay };
    this.servers[0] = await Stack.startServer(this.timings, this.dir, pgs, this.db, this.logs, 0, this.serverFlags);
    await this.shop?.restart(this.servers[0].url);
  }

  async stop(): Promise<void> {
    await Promise.all([
      ...this.servers.map((server) => stop(server)),
      stop(this.pg),
      stop(this.kakaopay),
      this.shop?.stop() ?? Promise.resolve(),
    ]);
    if (this.cluster) {
      this.cluster.balancer.kill();
      script('postgres', `postgres_remove ${this.cluster.database}`);
    }
  }

  async pgStats(): Promise<PgStats> {
    return (await fetch(`${this.pg.url}/__admin/stats`)).json();
  }

  /** The PG's payment for an order, or null when it has none. */
  async pgPaymentFor(orderId: string): Promise<PgPayment | null> {
    const response = await fetch(`${this.pg.url}/v1/payments/orders/${encodeURIComponent(orderId)}`, {
      headers: { authorization: `Basic ${Buffer.from(`${this.pgSecretKey}:`).toString('base64')}` },
    });
    if (response.status === 404) return null;
    if (!response.ok) throw new Error(`the PG's lookup of ${orderId} answered ${response.status}: ${await response.text()}`);
    return response.json();
  }

  async kakaopayStats(): Promise<PgStats> {
    return (await fetch(`${this.kakaopay.url}/__admin/stats`)).json();
  }

  /** KakaoPay's payment for an order, as its lookup shows it, in Toss's words
   *  where they mean the same (`SUCCESS_PAYMENT` is `DONE`): the payment the
   *  server prepared last for it that KakaoPay charged, or else the last one.
   *  KakaoPay looks a payment up by its tid only, which the server logs as it
   *  prepares it. Null when the server prepared none. */
  async kakaopayPaymentFor(orderId: string): Promise<PgPayment | null> {
    const prepared = new RegExp(`KakaoPay payment prepared.*order_id="?${orderId}"?\\s.*tid="?(\\w+)`);
    const tids = this.logs.server.flatMap((line) => line.match(prepared)?.[1] ?? []);
    const payments: PgPayment[] = [];
    for (const tid of tids) {
      const response = await fetch(`${this.kakaopay.url}/online/v1/payment/order`, {
        method: 'POST',
        headers: { authorization: `SECRET_KEY ${this.kakaopaySecretKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ cid: KAKAOPAY_CID, tid }),
      });
      if (!response.ok) throw new Error(`KakaoPay's lookup of ${tid} answered ${response.status}: ${await response.text()}`);
      const order = await response.json();
      const status = KAKAOPAY_AS_TOSS[order.status] ?? order.status;
      payments.push({ status, orderId: order.partner_order_id, totalAmount: order.amount?.total ?? 0 });
    }
    const charged = payments.filter((payment) => ['DONE', 'CANCELED', 'PARTIAL_CANCELED'].includes(payment.status));
    return charged.at(-1) ?? payments.at(-1) ?? null;
  }

  /** The merchant's KakaoPay secret key, as KakaoPay's fake printed it. */
  get kakaopaySecretKey(): string {
    return this.kakaopay.banner.match(/SECRET_KEY (\S+)/)?.[1] ?? 'test_sk_payonce_fake_pg_0000';
  }

  /** Merges `patch` into KakaoPay's fake's runtime config (the same admin API as Toss's). */
  configureKakaoPay(patch: object): Promise<void> {
    return configureFake(this.kakaopay, patch);
  }

  /** Merges `patch` into the fake PG's runtime config. */
  configurePg(patch: object): Promise<void> {
    return configureFake(this.pg, patch);
  }

  /** A charge made at the PG directly, as if another system had made it. */
  async chargeAtPg(orderId: string, amount: number): Promise<void> {
    const response = await fetch(`${this.pg.url}/__admin/charges`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orderId, amount }),
    });
    if (!response.ok) throw new Error(`the fake PG refused the charge: ${await response.text()}`);
  }

  /** Keeps every processing at the PG from finishing until the returned
   *  function lets them go (the fake PG's `hold`): a payment stays processing
   *  for as long as the test needs, however slow the machine, where a latency
   *  would race it. */
  async holdPg(): Promise<() => Promise<void>> {
    await this.configurePg({ hold: true });
    return () => this.configurePg({ hold: false });
  }

  /** Waits until the PG has started `count` more processings than `before`. */
  async pgStartedProcessing(before: number, count = 1): Promise<void> {
    await expect
      .poll(async () => (await this.pgStats()).processings, { message: 'the PG is charging' })
      .toBe(before + count);
  }

  /** How many customers' confirm POSTs the order servers received since `mark`,
   *  over every server process this stack ran: each logs a confirm as it
   *  arrives, so one whose server was killed mid-request is counted too. */
  confirmsReceivedSince(mark: LogMark): number {
    return this.logs.since(mark).server.filter((line) => line.includes("customer's confirm received")).length;
  }
}

/** Merges `patch` into a fake PG's runtime config (Toss's and KakaoPay's share the admin API). */
async function configureFake(fake: Running, patch: object): Promise<void> {
  const response = await fetch(`${fake.url}/__admin/config`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(patch),
  });
  if (!response.ok) throw new Error(`the fake PG at ${fake.url} refused the config: ${await response.text()}`);
}

export const defaultPgConfig = {
  latency_ms: 300,
  window_mode: 'redirect',
  slow_tail: { fraction: 0, latency_ms: 20_000 },
  continue_after_disconnect: true,
  contract_limit: null,
  hold: false,
  faults: {
    decline: 0,
    error_500: 0,
    rate_limit_429: 0,
    forbidden_consecutive: 0,
    reset_after_charge: 0,
    error_500_after_charge: 0,
    reset_before_processing: 0,
  },
};
