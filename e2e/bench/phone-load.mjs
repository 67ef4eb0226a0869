// A first visit on a low-end phone: headless Chromium with Lighthouse's mobile
// throttling (CPU 4× slower, 150 ms round trips, 1.6 Mbps down, 750 kbps up) and
// a phone's screen, timed from navigation to an enabled Pay button, cold (a new
// browser context each load: no cache, no cookie). Measured for the cart (`/`)
// and for a shop's checkout (`/checkout/{id}`), a new one per load, created
// through the shop API as a shop's backend does: a checkout's link opens in one
// browser only.
// Usage: node bench/phone-load.mjs <payonce url> <shop key> [runs]
import { chromium } from '@playwright/test';
import { get } from 'node:http';

const [payonceUrl, shopKey, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 9);

// Lighthouse's mobile settings (`throttling.mobileSlow4G`, `screenEmulation.mobile`):
// 1.6 Mbps is 1,638.4 kbit/s, 204,800 bytes/s.
const LATENCY_MS = 150;
const DOWNLOAD_BYTES_PER_S = (1.6 * 1024 * 1000) / 8;
const UPLOAD_BYTES_PER_S = (750 * 1024) / 8;
const CPU_SLOWDOWN = 4;
const PHONE = { viewport: { width: 412, height: 823 }, deviceScaleFactor: 1.75, isMobile: true, hasTouch: true };

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});

/** A new checkout of the bench's shop: the address its customer is sent to (`next_url`, token and all). */
async function newCheckout() {
  const response = await fetch(`${payonceUrl}/v1/checkouts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${shopKey}`, 'idempotency-key': crypto.randomUUID(), 'content-type': 'application/json' },
    body: JSON.stringify({
      reference: `bench-${Date.now()}`,
      name: { en: 'Two novels', ko: '소설 두 권' },
      lines: [
        { name: 'The Vegetarian', quantity: 1, unit_amount: 13_500 },
        { name: 'Human Acts', quantity: 1, unit_amount: 14_000 },
      ],
      amount: 27_500,
      return_url: 'http://127.0.0.1/back',
    }),
  });
  if (response.status !== 201) throw new Error(`the shop API refused the checkout: ${await response.text()}`);
  // The link names the server's public URL; the bench reaches it at `payonceUrl`.
  const link = new URL((await response.json()).next_url);
  return `${payonceUrl}${link.pathname}${link.hash}`;
}

// Set in the page before anything of it runs: when Pay is first enabled (a
// mutation observer, so the time does not depend on how often the bench polls),
// and when Trunk says the wasm has started.
function watchForPay() {
  const enabled = () => {
    const pay = document.querySelector('[data-testid="pay"]');
    return pay && !pay.disabled && pay.getAttribute('aria-disabled') !== 'true' && pay.textContent.startsWith('Pay ₩');
  };
  new MutationObserver((_, observer) => {
    if (enabled()) {
      window.__payEnabledAt = performance.now();
      observer.disconnect();
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  addEventListener('TrunkApplicationStarted', () => (window.__startedAt = performance.now()));
}

/** One cold load of `url`: when Pay was enabled, and what happened before. */
async function coldLoad(url) {
  const context = await browser.newContext({ ...PHONE, locale: 'en-US' });
  await context.addInitScript(watchForPay);
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: LATENCY_MS,
    downloadThroughput: DOWNLOAD_BYTES_PER_S,
    uploadThroughput: UPLOAD_BYTES_PER_S,
  });
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_SLOWDOWN });
  const encoded = new Map();
  cdp.on('Network.loadingFinished', (event) => encoded.set(event.requestId, event.encodedDataLength));
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForFunction(() => window.__payEnabledAt !== undefined, null, { polling: 100, timeout: 60_000 });
  const load = await page.evaluate(() => {
    const payAt = window.__payEnabledAt;
    const navigation = performance.getEntriesByType('navigation')[0];
    const requests = [navigation, ...performance.getEntriesByType('resource')]
      .filter((entry) => entry.startTime < payAt)
      .map((entry) => ({ url: entry.name, path: new URL(entry.name).pathname, start: entry.startTime, end: entry.responseEnd }));
    return { payAt, startedAt: window.__startedAt, requests };
  });
  load.transferred = [...encoded.values()].reduce((sum, bytes) => sum + bytes, 0);
  await context.close();
  return load;
}

/** What a request was, for the breakdown: the page's own files by kind, API calls by path. */
function kindOf(path) {
  if (path.startsWith('/api/')) return `${path.replace(/\/(ord|po)_[\w-]+/, '/{id}')}`;
  const extension = path.split('.').pop();
  return { wasm: 'wasm', js: 'JS', css: 'CSS', svg: 'icon' }[extension] ?? 'HTML';
}

/** The bytes the server sends for `url` to a browser that accepts only gzip (the build's `.gz`). */
const gzipBytes = (url) =>
  new Promise((resolve, reject) => {
    get(url, { headers: { 'accept-encoding': 'gzip' } }, (response) => {
      let bytes = 0;
      response.on('data', (chunk) => (bytes += chunk.length));
      response.on('end', () => resolve(bytes));
    }).on('error', reject);
  });

/** The page's own files of a load (HTML, JS, wasm, CSS), as sent gzipped: what its budget counts. */
async function firstLoadGzip(load) {
  const sizes = {};
  for (const { url, path } of load.requests) {
    const kind = kindOf(path);
    if (['HTML', 'JS', 'wasm', 'CSS'].includes(kind)) sizes[kind] = (sizes[kind] ?? 0) + (await gzipBytes(url));
  }
  const total = Object.values(sizes).reduce((sum, bytes) => sum + bytes, 0);
  const each = Object.entries(sizes).map(([kind, bytes]) => `${kind} ${(bytes / 1024).toFixed(1)}`).join(', ');
  return `${(total / 1024).toFixed(1)} KB gzip as sent (${each})`;
}

const quantile = (values, q) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];
const ms = (value) => `${value.toFixed(0)} ms`;

async function bench(label, nextUrl) {
  await coldLoad(await nextUrl()); // the server's files into the OS's cache; not counted
  const loads = [];
  for (let run = 0; run < runs; run++) loads.push(await coldLoad(await nextUrl()));
  const payAt = loads.map((load) => load.payAt);
  console.log(`${label}: navigation -> enabled Pay over ${runs} cold loads: median ${ms(quantile(payAt, 0.5))}, p90 ${ms(quantile(payAt, 0.9))}, best ${ms(Math.min(...payAt))}`);
  // Where the time went, median by median: when each request started and ended.
  const byKind = new Map();
  for (const load of loads) {
    for (const { path, start, end } of load.requests) {
      const kind = kindOf(path);
      if (!byKind.has(kind)) byKind.set(kind, { starts: [], ends: [] });
      byKind.get(kind).starts.push(start);
      byKind.get(kind).ends.push(end);
    }
  }
  const requests = quantile(loads.map((load) => load.requests.length), 0.5);
  const transferred = quantile(loads.map((load) => load.transferred), 0.5);
  console.log(`  first load: ${await firstLoadGzip(loads[0])}`);
  console.log(`  ${requests} requests before Pay, ${(transferred / 1024).toFixed(1)} KB transferred (median):`);
  for (const [kind, { starts, ends }] of [...byKind].sort((a, b) => quantile(a[1].starts, 0.5) - quantile(b[1].starts, 0.5))) {
    console.log(`    ${kind.padEnd(34)} ${ms(quantile(starts, 0.5)).padStart(8)} -> ${ms(quantile(ends, 0.5)).padStart(8)}`);
  }
  const started = loads.map((load) => load.startedAt).filter((at) => at !== undefined);
  if (started.length) console.log(`    ${'wasm started'.padEnd(34)} ${''.padStart(8)}    ${ms(quantile(started, 0.5)).padStart(8)}`);
}

console.log(`a phone: CPU ${CPU_SLOWDOWN}x slower, ${LATENCY_MS} ms round trips, ${DOWNLOAD_BYTES_PER_S} bytes/s down, ${UPLOAD_BYTES_PER_S} up, ${PHONE.viewport.width}x${PHONE.viewport.height}`);
await bench('the cart (/)', async () => `${payonceUrl}/`);
await bench('a checkout (/checkout/{id})', newCheckout);
await browser.close();
