// Other customers' API latency, without and then with one client flooding the
// shop at a steady rate, first with POSTs (orders), then with checks of its own
// order that ask to wait (`?wait=2s`): what the rate limits refuse (429
// RATE_LIMITED) and the waiting checks it may not hold must not slow anyone
// else down much.
// Last, the client opens connections that never bring a request (nothing, or
// half of HTTP/2's preface): the server closes each after its client timeout,
// and past the client's share of connections answers 429 at once.
// The customers come from 127.0.0.2, the flooder from 127.0.0.3, so that the
// per-address limit tells them apart as it would tell two homes apart.
// Usage: node bench/rate-limit.mjs <shop url> [seconds per phase=20] [flood per second=1000]
import http from 'node:http';
import net from 'node:net';

const [shopUrl, secondsArg, rateArg] = process.argv.slice(2);
const seconds = Number(secondsArg ?? 20);
const floodRate = Number(rateArg ?? 1000);
const shop = new URL(shopUrl);

function send(method, path, { cookie, body, localAddress, agent }) {
  return new Promise((resolve) => {
    const started = performance.now();
    const request = http.request(
      {
        host: shop.hostname,
        port: shop.port,
        method,
        path,
        localAddress,
        agent,
        headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
      },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode,
            ms: performance.now() - started,
            cookie: response.headers['set-cookie']?.[0]?.split(';')[0],
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    request.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    request.end(body);
  });
}

const cart = JSON.stringify({ items: [{ sku: 'CERAMIC-MUG', quantity: 1 }] });

/** One customer: an order now and then, and reads of it in between (about
 *  three a second, within a customer's 240 a minute), until `until`. */
async function customer(until, latencies) {
  const agent = new http.Agent({ keepAlive: true, localAddress: '127.0.0.2' });
  const first = await send('POST', '/api/orders', { body: cart, localAddress: '127.0.0.2', agent });
  const cookie = first.cookie;
  const orderId = JSON.parse(first.body).order_id;
  for (let round = 0; performance.now() < until; round++) {
    const read = await send('GET', `/api/orders/${orderId}`, { cookie, localAddress: '127.0.0.2', agent });
    latencies.push(read.ms);
    if (round % 20 === 0) { // an order about every 6 s, within a customer's limit
      const order = await send('POST', '/api/orders', { cookie, body: cart, localAddress: '127.0.0.2', agent });
      latencies.push(order.ms);
      if (order.status !== 201) throw new Error(`a customer's order was refused: ${order.status} ${order.body}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  agent.destroy();
}

/** One client sending `floodRate` requests a second with one cookie, until
 *  `until`: orders (`kind` 'posts'), or checks of its own order asking to wait. */
async function flood(until, tally, kind) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256, localAddress: '127.0.0.3' });
  const first = await send('POST', '/api/orders', { body: cart, localAddress: '127.0.0.3', agent });
  const cookie = first.cookie;
  const orderId = JSON.parse(first.body).order_id;
  const pending = [];
  const interval = 1000 / floodRate;
  let next = performance.now();
  while (performance.now() < until) {
    next += interval;
    const request = kind === 'posts'
      ? send('POST', '/api/orders', { cookie, body: cart, localAddress: '127.0.0.3', agent })
      : send('GET', `/api/orders/${orderId}?wait=2s`, { cookie, localAddress: '127.0.0.3', agent });
    pending.push(request.then((answer) => {
      tally.set(answer.status, (tally.get(answer.status) ?? 0) + 1);
    }));
    const wait = next - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  await Promise.all(pending);
  agent.destroy();
}

/** One client opening `floodRate` connections a second from one address that
 *  send nothing or half of HTTP/2's preface and wait, until `until`. */
async function connectionFlood(until, tally) {
  const sockets = [];
  const interval = 1000 / floodRate;
  let next = performance.now();
  for (let n = 0; performance.now() < until; n++) {
    next += interval;
    const socket = net.connect({ host: shop.hostname, port: Number(shop.port), localAddress: '127.0.0.3' });
    let answered = '';
    socket.on('connect', () => { if (n % 2) socket.write('PRI * HTTP/2.0\r\n'); });
    socket.on('data', (chunk) => { answered += chunk; });
    socket.on('error', () => {});
    socket.on('close', () => {
      const outcome = answered.startsWith('HTTP/1.1 429') ? 'turned away (429)' : 'closed by the server';
      tally.set(outcome, (tally.get(outcome) ?? 0) + 1);
    });
    sockets.push(socket);
    const wait = next - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  const open = sockets.filter((socket) => !socket.closed).length;
  tally.set('still open at the end', open);
  for (const socket of sockets) socket.destroy();
}

async function phase(name, floodKind) {
  const until = performance.now() + seconds * 1000;
  const latencies = [];
  const tally = new Map();
  await Promise.all([
    ...Array.from({ length: 5 }, () => customer(until, latencies)),
    ...(floodKind === 'connections' ? [connectionFlood(until, tally)] : []),
    ...(floodKind && floodKind !== 'connections' ? [flood(until, tally, floodKind)] : []),
  ]);
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  const flooded = [...tally].map(([status, count]) => `${count} × ${status}`).join(', ');
  console.log(`  ${name.padEnd(42)} ${String(latencies.length).padStart(6)} requests  p50 ${at(0.5).toFixed(1).padStart(6)} ms  p95 ${at(0.95).toFixed(1).padStart(6)} ms  p99 ${at(0.99).toFixed(1).padStart(6)} ms` +
    (floodKind ? `   flood: ${flooded}` : ''));
  return { p95: at(0.95), p99: at(0.99) };
}

console.log(`  5 customers reading their orders and ordering now and then, ${seconds} s a phase`);
const quiet = await phase('alone', null);
const posts = await phase(`with ${floodRate} POSTs/s from one client`, 'posts');
const checks = await phase(`with ${floodRate} checks/s from one client`, 'checks');
const connections = await phase(`with ${floodRate} silent connections/s`, 'connections');
console.log(`  p95 with the POST flood / p95 alone: ${(posts.p95 / quiet.p95).toFixed(2)}× (target: at most 1.5×)`);
console.log(`  p95 with the check flood / p95 alone: ${(checks.p95 / quiet.p95).toFixed(2)}× (target: at most 1.5×)`);
console.log(`  p99 with the connection flood / p99 alone: ${(connections.p99 / quiet.p99).toFixed(2)}× (target: at most 2×)`);
