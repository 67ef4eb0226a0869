// Measures the page's first load: bytes transferred (wasm + JS + CSS + HTML) and
// the time from navigation to an interactive Pay button, in headless Chromium.
// Usage: node bench/page-load.mjs <shop url> [runs]
import { chromium } from '@playwright/test';
import { get } from 'node:http';

const [shopUrl, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 15);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});

// What the first visit downloads is whatever the browser fetched to show the
// cart: the sizes come from those responses, not from a listing of dist/. The
// whole app that the cart prefetches once loaded is counted apart. Each file is
// then asked for again with only gzip, and with only brotli, accepted: the
// compressed sizes are the bytes the order server sends, as a browser gets them.
const servedBytes = (url, encoding) =>
  new Promise((resolve, reject) => {
    get(url, { headers: { 'accept-encoding': encoding } }, (response) => {
      let bytes = 0;
      response.on('data', (chunk) => (bytes += chunk.length));
      response.on('end', () => resolve(bytes));
    }).on('error', reject);
  });
const prefetchedBy = (page) =>
  page.evaluate(() => [...document.querySelectorAll('link[rel="prefetch"]')].map((link) => link.href));
const kindOf = (url, resourceType) =>
  resourceType === 'document' ? 'html' : { js: 'js', css: 'css', wasm: 'wasm' }[new URL(url).pathname.split('.').pop()];
const sizes = {};
{
  const page = await browser.newPage();
  const responses = [];
  page.on('response', (response) => responses.push(response));
  await page.goto(shopUrl);
  await page.waitForSelector('[data-testid="pay"]:not([disabled])');
  await page.waitForLoadState('networkidle');
  const prefetched = new Set(await prefetchedBy(page));
  for (const response of responses) {
    const url = response.url();
    const kind = prefetched.has(url) ? 'prefetched' : kindOf(url, response.request().resourceType());
    if (!kind) continue;
    const bytes = await response.body();
    const entry = (sizes[kind] ??= { files: 0, raw: 0, gzip: 0, brotli: 0 });
    entry.files += 1;
    entry.raw += bytes.length;
    entry.gzip += await servedBytes(url, 'gzip');
    entry.brotli += await servedBytes(url, 'br');
  }
  await page.close();
}
const kb = (bytes) => (bytes / 1024).toFixed(1).padStart(7);
const row = (label, entry) => console.log(`  ${label.padEnd(33)} ${kb(entry.raw)} ${kb(entry.gzip)} ${kb(entry.brotli)}`);
const files = (kind, entry) => `${kind} (${entry.files} file${entry.files > 1 ? 's' : ''})`;
console.log(`first-load size of ${shopUrl} (KB)   raw    gzip  brotli`);
const { prefetched, ...firstLoad } = sizes;
let total = { raw: 0, gzip: 0, brotli: 0 };
for (const [kind, entry] of Object.entries(firstLoad)) {
  row(files(kind, entry), entry);
  for (const key of Object.keys(total)) total[key] += entry[key];
}
row('total', total);
if (prefetched) row(`then, ${files('prefetched', prefetched)}`, prefetched);

const timings = [];
let transferred = 0;
for (let run = 0; run < runs; run++) {
  const context = await browser.newContext(); // a cold cache every run
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  const urls = new Map();
  const received = [];
  cdp.on('Network.requestWillBeSent', (event) => urls.set(event.requestId, event.request.url));
  cdp.on('Network.loadingFinished', (event) => received.push([urls.get(event.requestId), event.encodedDataLength]));
  await page.goto(shopUrl);
  await page.waitForFunction(() => {
    const pay = document.querySelector('[data-testid="pay"]');
    return pay && !pay.disabled && pay.textContent.startsWith('Pay ₩');
  });
  timings.push(await page.evaluate(() => performance.now()));
  const prefetched = new Set(await prefetchedBy(page));
  transferred = received.reduce((sum, [url, bytes]) => (prefetched.has(url) ? sum : sum + bytes), 0);
  await context.close();
}
// The return from the payment window: a customer who came in at `/` (whose cart
// prefetched the whole app once idle) chooses a card and lands on /pay/success;
// timed from that navigation to the page saying "submitting".
const returns = [];
const returnRuns = Math.max(5, Math.min(runs, 15));
for (let run = 0; run < returnRuns; run++) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(shopUrl);
  await page.waitForSelector('[data-testid="pay"]:not([disabled])');
  await page.waitForLoadState('networkidle'); // the prefetch of the whole app is done
  await page.click('[data-testid="pay"]');
  await page.waitForURL(/\/v1\/window\?/);
  // A slow approval keeps the page in "submitting" long enough to see it.
  await page.click('[data-scenario="approve_40s"]');
  await page.waitForURL(/\/pay\/success\?/);
  await page.waitForSelector('[data-payment-state="submitting"]');
  returns.push(await page.evaluate(() => performance.now()));
  await context.close();
}
await browser.close();
const quantile = (values, q) => values[Math.min(values.length - 1, Math.floor(q * values.length))].toFixed(0);
timings.sort((a, b) => a - b);
returns.sort((a, b) => a - b);
const at = (q) => quantile(timings, q);
console.log(`transferred on a cold load up to an interactive Pay button, prefetches aside (compressed by the server): ${(transferred / 1024).toFixed(1)} KB`);
console.log(`navigation -> interactive Pay button over ${runs} cold loads: median ${at(0.5)} ms, p90 ${at(0.9)} ms, best ${timings[0].toFixed(0)} ms`);
console.log(`back from the payment window: navigation to /pay/success -> "submitting" over ${returnRuns} returns: median ${quantile(returns, 0.5)} ms, p90 ${quantile(returns, 0.9)} ms`);
