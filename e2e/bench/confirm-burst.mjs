// One burst of customers confirming at once: each creates an order, then all
// confirms leave together. Prints what the customers got and how long they
// waited, then what the PG saw. Every charge must belong to a PAID order.
// Usage: node bench/confirm-burst.mjs <shop url> <pg url> <customers> [server admin urls, comma-separated]
import { randomUUID } from 'node:crypto';

const [shopUrl, pgUrl, customersArg, adminUrlsArg] = process.argv.slice(2);
const adminUrls = adminUrlsArg ? adminUrlsArg.split(',') : [];
const customers = Number(customersArg ?? 120);

async function json(response) {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${response.url}: ${response.status} ${text}`);
  }
}

async function newCustomerWithOrder() {
  const response = await fetch(`${shopUrl}/api/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ items: [{ sku: 'CERAMIC-MUG', quantity: 1 }] }),
  });
  if (response.status !== 201) throw new Error(`creating an order: ${response.status} ${await response.text()}`);
  const cookie = response.headers.get('set-cookie').split(';')[0];
  return { cookie, order: await json(response) };
}

async function confirm({ cookie, order }, index) {
  const started = performance.now();
  const response = await fetch(`${shopUrl}/api/orders/${order.order_id}/confirm`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID(), cookie },
    body: JSON.stringify({ payment_key: `pk_burst_${index}`, amount: order.amount }),
  });
  const body = await json(response);
  const answered = body.status ?? body.order?.status ?? body.code;
  const outcome = `${response.status} ${answered}${body.failure ? ` ${body.failure.code}` : ''}`;
  return { outcome, ms: performance.now() - started };
}

/** Waits for orders answered as still in progress to settle, as the page's checks would. */
async function settled({ cookie, order }) {
  for (let check = 0; check < 1200; check++) {
    const current = await json(await fetch(`${shopUrl}/api/orders/${order.order_id}`, { headers: { cookie } }));
    if (current.status === 'PAID' || current.status === 'FAILED') return current.status;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return 'still unsettled after 10 minutes';
}

const shoppers = await Promise.all(Array.from({ length: customers }, newCustomerWithOrder));
const burstStarted = performance.now();
const answers = await Promise.all(shoppers.map(confirm));
const burstMs = performance.now() - burstStarted;

const byOutcome = new Map();
for (const { outcome, ms } of answers) byOutcome.set(outcome, [...(byOutcome.get(outcome) ?? []), ms]);
const percentile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(0);
console.log(`  ${customers} confirms at once, all answered in ${(burstMs / 1000).toFixed(1)} s`);
console.log('  answer                               count   p50 ms   p95 ms   max ms');
for (const [outcome, times] of [...byOutcome].sort((a, b) => b[1].length - a[1].length)) {
  times.sort((a, b) => a - b);
  const cells = [percentile(times, 0.5), percentile(times, 0.95), times.at(-1).toFixed(0)].map((cell) => cell.padStart(8));
  console.log(`  ${outcome.padEnd(36)} ${String(times.length).padStart(5)} ${cells.join(' ')}`);
}

const finals = await Promise.all(shoppers.map(settled));
const paid = finals.filter((status) => status === 'PAID').length;
const stats = await json(await fetch(`${pgUrl}/__admin/stats`));
const charges = Object.values(stats.charges_by_order).reduce((sum, count) => sum + count, 0);
console.log(`  settled: ${paid} PAID, ${finals.filter((status) => status === 'FAILED').length} FAILED, ` +
  `${finals.filter((status) => status !== 'PAID' && status !== 'FAILED').length} unsettled`);
console.log(`  PG: ${stats.confirm_requests} confirms received, peak ${stats.peak_in_flight} in processing, ` +
  `${stats.contract_limit_rejections} refused over the contract limit, ${charges} charges, ` +
  `${stats.double_charges.length} double charges`);
if (adminUrls.length > 0) {
  // What recovery asked the PG, beside what customers' confirms did, over every server.
  const texts = await Promise.all(adminUrls.map(async (url) => (await fetch(`${url}/metrics`)).text()));
  const lines = texts.flatMap((text) => text.split('\n'));
  const sum = (name, filter = '') =>
    lines
      .filter((line) => line.startsWith(name) && line.includes(filter))
      .reduce((total, line) => total + Number(line.split(' ').at(-1)), 0);
  const first = sum('payment_pg_confirm_calls_total') - sum('payment_pg_confirm_calls_total', 'outcome="busy"');
  const lookups = sum('payment_pg_recovery_calls_total', 'call="lookup"');
  const resends = sum('payment_pg_recovery_calls_total', 'call="resend"');
  const retries = sum('payment_pg_lookup_retry_total');
  console.log(`  recovery: ${lookups} lookups (${retries} of them retries) and ${resends} resent confirms, ` +
    `beside ${first} customers' confirms; ${sum('payment_pg_recovery_over_budget_total')} held back by the budget`);
  // A cluster's shared PG cap: what taking and freeing a place cost each server.
  texts.forEach((text, server) => {
    const quantile = (op, q) => {
      const line = text.split('\n').find((l) => l.startsWith(`payment_pg_place_seconds{op="${op}",quantile="${q}"}`));
      return line ? (Number(line.split(' ').at(-1)) * 1000).toFixed(2) : 'none';
    };
    if (quantile('take', '0.5') !== 'none') {
      console.log(`  server ${server + 1}: taking a place p50 ${quantile('take', '0.5')} ms, p95 ${quantile('take', '0.95')} ms; ` +
        `freeing one p50 ${quantile('free', '0.5')} ms, p95 ${quantile('free', '0.95')} ms`);
    }
  });
}
if (charges !== paid || stats.double_charges.length > 0) {
  console.log('  MISMATCH: charges and PAID orders differ');
  process.exitCode = 1;
}
