// How soon the page shows "paid" after the PG completes the payment, in the
// 40-second demo flow (the PG approves after 40 s; the page checks from 15 s on).
// Each customer pays once, in a browser of its own, all at the same time: half on
// a shop whose checks wait for the order to change (?wait=), half on the same
// shop with waiting turned off (--max-waiting-checks 0), which polls.
// Usage: node bench/paid-latency.mjs <waiting shop url> <polling shop url> <pg url> [runs per shop]
import { chromium } from '@playwright/test';

const [waitingShop, pollingShop, pgUrl, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 5);
const auth = 'Basic ' + Buffer.from('test_sk_payonce_fake_pg_0000:').toString('base64');

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-timer-throttling'],
});

/** When the PG's ledger first shows the order's payment DONE (looked up every 10 ms). */
async function pgDoneAt(orderId, notBefore) {
  while (Date.now() < notBefore) await new Promise((resolve) => setTimeout(resolve, 50));
  for (;;) {
    const response = await fetch(`${pgUrl}/v1/payments/orders/${orderId}`, { headers: { authorization: auth } });
    if (response.ok && (await response.json()).status === 'DONE') return Date.now();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** One customer's payment: milliseconds from the PG's completion to "paid" on screen. */
async function onePayment(shop) {
  const context = await browser.newContext();
  const page = await context.newPage();
  let paidAt;
  await page.exposeFunction('reportPaid', () => {
    paidAt ??= Date.now();
  });
  await page.addInitScript(() => {
    new MutationObserver(() => {
      if (document.querySelector('[data-payment-state="paid"]')) window.reportPaid();
    }).observe(document, { subtree: true, attributes: true, childList: true });
  });
  await page.goto(shop);
  await page.getByTestId('pay').click();
  await page.waitForURL(/\/v1\/window\?/);
  const orderId = new URL(page.url()).searchParams.get('orderId');
  await page.locator('[data-scenario="approve_40s"]').click();
  const done = await pgDoneAt(orderId, Date.now() + 38_000);
  await page.locator('[data-payment-state="paid"]').waitFor({ timeout: 20_000 });
  await context.close();
  return paidAt - done;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const [waiting, polling] = await Promise.all(
  [waitingShop, pollingShop].map((shop) => Promise.all(Array.from({ length: runs }, () => onePayment(shop)))),
);
await browser.close();
const show = (label, values) =>
  console.log(`  ${label.padEnd(34)} median ${String(median(values)).padStart(5)} ms   runs: ${values.join(', ')} ms`);
console.log(`"paid" on screen after the PG completed the payment (40 s demo flow, ${runs} runs each):`);
show('checks that wait for a change', waiting);
show('polling only (--max-waiting-checks 0)', polling);
