// A shop that limits how often a customer may read (here 12 reads a minute, a
// burst of 5; the page checks 30 a minute) answers some checks 429 with
// Retry-After. The page takes that as "ask later", never as an answer about the
// payment: it waits at least as long as asked, keeps checking, sends nothing
// again, and shows the payment paid once the PG answers.
import { expect, test } from '../support/fixtures';
import { checkout } from '../support/pages';

test.use({ timings: 'real', serverFlags: ['--rate-limit-customer-reads', '12'] });

type Seen = { checks: number[]; throttled: { at: number; retryAfterMs: number }[] };

test('checks refused with 429 are asked again after Retry-After, and the payment ends paid', async ({
  page,
  stack,
  confirmPosts,
  states,
}) => {
  test.setTimeout(150_000);
  // On the page's own clock: when each check of the order left, and each 429 it got.
  await page.addInitScript(() => {
    const fetch = window.fetch;
    const seen: Seen = ((window as unknown as { __seen: Seen }).__seen = { checks: [], throttled: [] });
    window.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = input instanceof Request ? input : null;
      const url = request?.url ?? String(input);
      const isCheck = (request?.method ?? init?.method ?? 'GET') === 'GET' && /\/api\/orders\/ord_[^/?]+\?wait=/.test(url);
      if (isCheck) seen.checks.push(performance.now());
      const response = await fetch(input, init);
      if (isCheck && response.status === 429) {
        seen.throttled.push({ at: performance.now(), retryAfterMs: Number(response.headers.get('retry-after')) * 1000 });
      }
      return response;
    };
  });
  const seen = () => page.evaluate(() => (window as unknown as { __seen: Seen }).__seen);
  // The PG holds the payment, so the page checks until the journey lets it go.
  const letPgFinish = await stack.holdPg();

  const confirm = await checkout(page, 'approve');
  await confirm.expectState('checking', 25_000);
  await expect
    .poll(async () => (await seen()).throttled.length, { message: 'the shop refused a check with 429', timeout: 45_000 })
    .toBeGreaterThan(0);
  await expect
    .poll(
      async () => {
        const { checks, throttled } = await seen();
        return checks.some((at) => at > throttled[0].at);
      },
      { message: 'the page checked again after the 429', timeout: 15_000 },
    )
    .toBe(true);
  await letPgFinish();

  await confirm.expectState('paid', 30_000);
  const { checks, throttled } = await seen();
  const [first] = throttled;
  expect(first.retryAfterMs, 'the refusal said when to come back').toBeGreaterThanOrEqual(1_000);
  const next = checks.find((at) => at > first.at)!;
  expect(next - first.at, 'the next check waited as long as the shop asked').toBeGreaterThanOrEqual(first.retryAfterMs - 50);
  expect(states.sequence).toEqual(['submitting', 'checking', 'paid']);
  expect(confirmPosts.count, 'a refused check never sends the payment again').toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
});
