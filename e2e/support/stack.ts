// A fake PG and an order server for one Playwright worker, serving the built page.
import path from 'node:path';
import { Running, repoRoot, scratchDir, start, stop } from './processes';

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

export interface PgStats {
  confirm_requests: number;
  processings: number;
  charges_by_order: Record<string, number>;
  double_charges: string[];
  in_flight: number;
}

export class Stack {
  private constructor(
    readonly timings: Timings,
    readonly dir: string,
    readonly pg: Running,
    public server: Running,
  ) {}

  static async start(timings: Timings): Promise<Stack> {
    const dir = scratchDir('payonce-e2e-');
    const pg = await start('fake-pg', ['--listen', '127.0.0.1:0'], path.join(dir, 'fake-pg.log'));
    const server = await Stack.startServer(timings, dir, pg.url, '127.0.0.1:0');
    return new Stack(timings, dir, pg, server);
  }

  private static startServer(timings: Timings, dir: string, pgUrl: string, listen: string): Promise<Running> {
    return start(
      'payonce-server',
      [
        '--listen', listen,
        '--db', path.join(dir, 'payonce.db'),
        '--static-dir', process.env.PAYONCE_DIST ?? path.join(repoRoot, 'dist'),
        '--pg-url', pgUrl,
        ...serverFlags[timings],
      ],
      path.join(dir, 'server.log'),
    );
  }

  get url(): string {
    return this.server.url;
  }

  /** SIGKILL the order server: no shutdown code runs, as in a crash. */
  async killServer(): Promise<void> {
    await stop(this.server, 'SIGKILL');
  }

  /** Starts the order server again on the same port and database. */
  async restartServer(): Promise<void> {
    this.server = await Stack.startServer(this.timings, this.dir, this.pg.url, new URL(this.server.url).host);
  }

  async stop(): Promise<void> {
    await Promise.all([stop(this.server), stop(this.pg)]);
  }

  async pgStats(): Promise<PgStats> {
    return (await fetch(`${this.pg.url}/__admin/stats`)).json();
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

  /** How many confirm POSTs the order server has answered, from its metrics. */
  async serverConfirmRequests(): Promise<number> {
    const metrics = await (await fetch(`${this.url}/metrics`)).text();
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
    reset_before_processing: 0,
  },
};
