// A fake PG and an order server for one Playwright worker, serving the built page.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Running, binaryPath, repoRoot, scratchDir, start, stop } from './processes';

/** Server timings. `real` is the shipped configuration; `fast` shrinks the
 *  checking window for journeys whose subject is not the timing itself. */
export type Timings = 'real' | 'fast';

const serverFlags: Record<Timings, string[]> = {
  // Recovery runs every 5 s instead of every minute so a late charge shows up
  // within the test; it is not a page timing.
  real: ['--recovery-interval', '5s'],
  fast: [
    '--confirm-wait', '3s',
    '--poll-interval', '500ms',
    '--poll-attempts', '12',
    '--pg-connect-timeout', '1s',
    '--pg-read-timeout', '4s',
    '--recovery-interval', '1s',
  ],
};

// Flags of servers that have them: the operators' listener on a port of its own
// (workers run side by side), and no limit per client address (every customer of
// a journey comes from this machine). Older servers get neither.
let ownFlags: string[] | undefined;
function optionalServerFlags(): string[] {
  if (ownFlags === undefined) {
    const help = execFileSync(binaryPath('payonce-server'), ['--help']).toString();
    const wanted = [
      ['--admin-listen', '127.0.0.1:0'],
      ['--rate-limit-address', '0'],
    ];
    ownFlags = wanted.filter(([flag]) => help.includes(flag)).flat();
  }
  return ownFlags;
}

export interface PgStats {
  confirm_requests: number;
  processings: number;
  charges_by_order: Record<string, number>;
  double_charges: string[];
  in_flight: number;
}

/** The PG's payment for an order, as its lookup shows it (Toss statuses: DONE, ABORTED, CANCELED, ...). */
export interface PgPayment {
  status: string;
  orderId: string;
}

export type LogMark = { server: number; pg: number };

/** What the two programs printed, line by line, across restarts. */
export class Logs {
  readonly server: string[] = [];
  readonly pg: string[] = [];

  /** The lines printed since `mark()` returned `from`. */
  since(from: LogMark): { server: string[]; pg: string[] } {
    return { server: this.server.slice(from.server), pg: this.pg.slice(from.pg) };
  }

  mark(): LogMark {
    return { server: this.server.length, pg: this.pg.length };
  }
}

export class Stack {
  /** Confirm POSTs answered by server processes that have since been killed. */
  private retiredConfirmRequests = 0;
  /** When the server was killed (`Date.now()`), for POSTs cut off by it. */
  readonly killedAt: number[] = [];

  private constructor(
    readonly timings: Timings,
    readonly dir: string,
    readonly logs: Logs,
    readonly pg: Running,
    public server: Running,
  ) {}

  static async start(timings: Timings): Promise<Stack> {
    const dir = scratchDir('payonce-e2e-');
    const logs = new Logs();
    const pg = await start('fake-pg', ['--listen', '127.0.0.1:0'], path.join(dir, 'fake-pg.log'), (line) =>
      logs.pg.push(line),
    );
    const server = await Stack.startServer(timings, dir, pg.url, logs);
    return new Stack(timings, dir, logs, pg, server);
  }

  private static startServer(timings: Timings, dir: string, pgUrl: string, logs: Logs): Promise<Running> {
    return start(
      'payonce-server',
      [
        // Always a port of its own: a restart on the old one could meet a port
        // another worker was given in the meantime.
        '--listen', '127.0.0.1:0',
        '--db', path.join(dir, 'payonce.db'),
        '--static-dir', process.env.PAYONCE_DIST ?? path.join(repoRoot, 'dist'),
        '--pg-url', pgUrl,
        ...serverFlags[timings],
        ...optionalServerFlags(),
      ],
      path.join(dir, 'server.log'),
      (line) => logs.server.push(line),
    );
  }

  /** Where the order server is now; it changes when the server is restarted. */
  get url(): string {
    return this.server.url;
  }

  /** Where the server's metrics are: its operators' listener, or the public one. */
  get metricsUrl(): string {
    const admin = this.server.banner.match(/admin (http:\/\/[\d.:]+)/)?.[1];
    return `${admin ?? this.server.url}/metrics`;
  }

  /** The merchant's secret key, as the fake PG printed it. */
  get pgSecretKey(): string {
    return this.pg.banner.match(/secret key: (\S+)/)?.[1] ?? 'test_sk_payonce_fake_pg_0000';
  }

  /** SIGKILL the order server: no shutdown code runs, as in a crash. Its count of
   *  confirm POSTs is read first, so that counting goes on across the restart. */
  async killServer(): Promise<void> {
    this.retiredConfirmRequests += await this.countConfirmRequests();
    this.killedAt.push(Date.now());
    await stop(this.server, 'SIGKILL');
  }

  /** Starts the order server again on the same database, on a new port (see `url`). */
  async restartServer(): Promise<void> {
    this.server = await Stack.startServer(this.timings, this.dir, this.pg.url, this.logs);
  }

  async stop(): Promise<void> {
    await Promise.all([stop(this.server), stop(this.pg)]);
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

  /** Merges `patch` into the fake PG's runtime config. */
  async configurePg(patch: object): Promise<void> {
    const response = await fetch(`${this.pg.url}/__admin/config`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(patch),
    });
    if (!response.ok) throw new Error(`fake PG config refused: ${await response.text()}`);
  }

  /** How many confirm POSTs the order server has answered (or seen hung up on),
   *  from its metrics, summed over every server process this stack ran. */
  async serverConfirmRequests(): Promise<number> {
    return this.retiredConfirmRequests + (await this.countConfirmRequests());
  }

  private async countConfirmRequests(): Promise<number> {
    const metrics = await (await fetch(this.metricsUrl)).text();
    return metrics
      .split('\n')
      .filter((line) => line.startsWith('http_requests_total{') && line.includes('route="/api/orders/{order_id}/confirm"'))
      .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
  }
}

export const defaultPgConfig = {
  latency_ms: 300,
  slow_tail: { fraction: 0, latency_ms: 20_000 },
  continue_after_disconnect: true,
  contract_limit: null,
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
