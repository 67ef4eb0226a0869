// A check of the order that hangs (the server stalls, a proxy holds the
// request) gives up after 5 s and counts as a check that learned nothing:
// the page neither waits on it forever nor stops checking because of it.
import { expect, test } from '../support/fixtures';
import { checkout } from '../support/pages';

test('a check that hangs gives up after 5 s and checking goes on to its end', async ({ page, stack, confirmPosts }) => {
  // The PG holds the payment past the page's 3 s wait for the confirm, so the page checks.
  const letPgFinish = await stack.holdPg();
  const held: string[] = [];
  const abandoned: number[] = [];
  // How long each check the page gave up on had been out, on the page's own clock
  // (the test's hears of a request late when the machine is busy).
  await page.addInitScript(() => {
    const fetch = window.fetch;
    const gaveUpAfter: number[] = ((window as unknown as { __gaveUpAfter: number[] }).__gaveUpAfter = []);
    window.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = input instanceof Request ? input : null;
      const url = request?.url ?? String(input);
      const isCheck = (request?.method ?? init?.method ?? 'GET') === 'GET' && /\/api\/orders\/ord_[^/?]+(\?|$)/.test(url);
      const started = performance.now();
      try {
        return await fetch(input, init);
      } catch (error) {
        if (isCheck) gaveUpAfter.push(performance.now() - started);
        throw error;
      }
    };
  });
  let confirmSent = false;
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url().endsWith('/confirm')) confirmSent = true;
  });
  await page.route(/\/api\/orders\/[^/]+$/, async (route) => {
    // The page's look at the order before it sends is answered; the checks after it hang.
    if (route.request().method() !== 'GET' || !confirmSent) return route.continue();
    held.push(new URL(route.request().url()).pathname);
    // Never answered: the page has to give up on it.
  });
  page.on('requestfailed', (request) => {
    if (request.method() === 'GET' && /\/api\/orders\/[^/]+$/.test(new URL(request.url()).pathname)) {
      abandoned.push(Date.now());
    }
  });

  const confirm = await checkout(page, 'approve');
  await confirm.expectState('checking', 10_000);
  await expect.poll(() => abandoned.length, { message: 'the page gave up on a hung check', timeout: 15_000 }).toBeGreaterThan(0);

  expect(held.length).toBeGreaterThan(0);
  const [waited] = await page.evaluate(() => (window as unknown as { __gaveUpAfter: number[] }).__gaveUpAfter);
  expect(waited, 'the first check was given up after about 5 s').toBeGreaterThanOrEqual(4_500);
  expect(waited).toBeLessThan(7_000);
  // The window (3 s + 12 × 0.5 s) ends even though every check hangs, without a resend.
  await confirm.expectState('unresolved', 20_000);
  expect(confirmPosts.count).toBe(1);
  await page.unrouteAll({ behavior: "ignoreErrors" });
  await letPgFinish();
});
