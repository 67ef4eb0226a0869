// Measures the page's first load: bytes transferred (wasm + JS + CSS + HTML) and
// the time from navigation to an interactive Pay button, in headless Chromium.
// Usage: node bench/page-load.mjs <shop url> [runs]
import { chromium } from '@playwright/test';
import { gzipSync, brotliCompressSync } from 'node:zlib';

const [shopUrl, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 15);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});

// What the first visit downloads is whatever the browser fetched to show the
// cart: the sizes come from those responses, not from a listing of dist/.
const kinds = { document: 'html', script: 'js', stylesheet: 'css' };
const kindOf = (response) =>
  new URL(response.url()).pathname.endsWith('.wasm') ? 'wasm' : kinds[response.request().resourceType()];
const sizes = {};
{
  const page = await browser.newPage();
  const bodies = [];
  page.on('response', (response) => {
    const kind = kindOf(response);
    if (kind) bodies.push(response.body().then((bytes) => [kind, bytes]));
  });
  await page.goto(shopUrl);
  await page.waitForSelector('[data-testid="pay"]:not([disabled])');
  for (const [kind, bytes] of await Promise.all(bodies)) {
    const entry = (sizes[kind] ??= { files: 0, raw: 0, gzip: 0, brotli: 0 });
    entry.files += 1;
    entry.raw += bytes.length;
    entry.gzip += gzipSync(bytes, { level: 9 }).length;
    entry.brotli += brotliCompressSync(bytes).length;
  }
  await page.close();
}
const kb = (bytes) => (bytes / 1024).toFixed(1).padStart(7);
console.log(`first-load size of ${shopUrl} (KB)   raw    gzip  brotli`);
let total = { raw: 0, gzip: 0, brotli: 0 };
for (const [kind, entry] of Object.entries(sizes)) {
  console.log(`  ${`${kind} (${entry.files} file${entry.files > 1 ? 's' : ''})`.padEnd(33)} ${kb(entry.raw)} ${kb(entry.gzip)} ${kb(entry.brotli)}`);
  for (const key of Object.keys(total)) total[key] += entry[key];
}
console.log(`  ${'total'.padEnd(33)} ${kb(total.raw)} ${kb(total.gzip)} ${kb(total.brotli)}`);

const timings = [];
let transferred = 0;
for (let run = 0; run < runs; run++) {
  const context = await browser.newContext(); // a cold cache every run
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  let bytes = 0;
  cdp.on('Network.loadingFinished', (event) => (bytes += event.encodedDataLength));
  await page.goto(shopUrl);
  await page.waitForFunction(() => {
    const pay = document.querySelector('[data-testid="pay"]');
    return pay && !pay.disabled && pay.textContent.startsWith('Pay ₩');
  });
  timings.push(await page.evaluate(() => performance.now()));
  transferred = bytes;
  await context.close();
}
await browser.close();
timings.sort((a, b) => a - b);
const at = (q) => timings[Math.min(timings.length - 1, Math.floor(q * timings.length))].toFixed(0);
console.log(`transferred on a cold load, as served (compressed by the server): ${(transferred / 1024).toFixed(1)} KB`);
console.log(`navigation -> interactive Pay button over ${runs} cold loads: median ${at(0.5)} ms, p90 ${at(0.9)} ms, best ${timings[0].toFixed(0)} ms`);
