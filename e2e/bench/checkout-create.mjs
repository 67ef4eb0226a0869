// Checkouts created per second through the shop API, and how long each create
// took, with `concurrency` shop backends' requests in flight at once on
// keep-alive connections, for `seconds`.
// Usage: node bench/checkout-create.mjs <payonce url> <shop key> [seconds=20] [concurrency=16]
import http from 'node:http';
import { randomUUID } from 'node:crypto';

const [payonceUrl, shopKey, secondsArg, concurrencyArg] = process.argv.slice(2);
const seconds = Number(secondsArg ?? 20);
const concurrency = Number(concurrencyArg ?? 16);
const payonce = new URL(payonceUrl);
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });

function create() {
  const id = randomUUID();
  const body = JSON.stringify({
    reference: id,
    name: { en: 'Two novels', ko: '소설 두 권' },
    lines: [
      { name: 'The Vegetarian', quantity: 1, unit_amount: 13500 },
      { name: 'Human Acts', quantity: 2, unit_amount: 14000 },
    ],
    amount: 41500,
    return_url: 'https://books.example/orders/back',
    metadata: { customer: 'c-77' },
  });
  return new Promise((resolve) => {
    const started = performance.now();
    const request = http.request(
      {
        host: payonce.hostname,
        port: payonce.port,
        method: 'POST',
        path: '/v1/checkouts',
        agent,
        headers: {
          authorization: `Bearer ${shopKey}`,
          'idempotency-key': id,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode, ms: performance.now() - started }));
      },
    );
    request.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    request.end(body);
  });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function phase(label, duration) {
  const until = performance.now() + duration * 1000;
  const latencies = [];
  const statuses = {};
  const worker = async () => {
    while (performance.now() < until) {
      const { status, ms } = await create();
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status === 201) latencies.push(ms);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { label, elapsed, created: latencies.length, statuses, latencies };
}

// A short warm-up (connections, the database's first pages) is not counted.
await phase('warm-up', 2);
const { elapsed, created, statuses, latencies } = await phase('measured', seconds);
const ms = (value) => `${value.toFixed(1)} ms`;
console.log(`shop API creates: ${concurrency} in flight for ${elapsed.toFixed(1)} s`);
console.log(`  created        ${created} (${(created / elapsed).toFixed(0)} a second)`);
console.log(`  answers        ${Object.entries(statuses).map(([status, count]) => `${status}: ${count}`).join(', ')}`);
console.log(`  create p50     ${ms(percentile(latencies, 50))}`);
console.log(`  create p95     ${ms(percentile(latencies, 95))}`);
console.log(`  create p99     ${ms(percentile(latencies, 99))}`);
console.log(`  create max     ${ms(latencies[latencies.length - 1])}`);
agent.destroy();
