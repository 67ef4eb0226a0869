// Two tabs of one browser open the same success link at the same moment (a
// restored session, a link opened twice). One of them sends the confirm POST;
// the other checks. Both end paid, with one POST and one charge.
import { BrowserContext } from '@playwright/test';
import { expect, test } from '../support/fixtures';
import { successUrl } from '../support/pages';

// A write in one tab reaches another tab's process a moment later. Here that
// moment is long: a tab sees stored attempts only 1.5 s after it loaded, so
// neither tab can rely on seeing the other's attempt; only the claim keeps the
// second POST back.
const lateStorage = () => {
  const loaded = Date.now();
  const getItem = Storage.prototype.getItem;
  Storage.prototype.getItem = function (key: string) {
    return key.startsWith('payonce.attempt.') && Date.now() - loaded < 1_500 ? null : getItem.call(this, key);
  };
};

/** Holds each tab's first check of the order until both tabs have asked, so that
 *  both learn the server has no confirm yet and both reach the claim. */
async function holdFirstChecksTogether(context: BrowserContext, tabs: number): Promise<void> {
  const held: (() => Promise<void>)[] = [];
  await context.route(/\/api\/orders\/ord_[^/]+$/, async (route) => {
    if (held.length >= tabs) return route.continue();
    held.push(() => route.continue());
    if (held.length === tabs) await Promise.all(held.map((release) => release()));
  });
}

for (const locks of [true, false]) {
  const title = `two tabs opening the same success link at once send one POST, and both end paid${locks ? '' : ', without Web Locks'}`;
  test(title, async ({ page, context, stack, confirmPosts, states }) => {
    if (!locks) await context.addInitScript(() => delete (Navigator.prototype as { locks?: unknown }).locks);
    await context.addInitScript(lateStorage);
    await page.goto('/');
    expect(await page.evaluate(() => 'locks' in navigator), 'Web Locks in this browser').toBe(locks);
    const url = await successUrl(page, 'approve');
    const orderId = new URL(url).searchParams.get('orderId')!;
    const second = await context.newPage();
    await holdFirstChecksTogether(context, 2);

    await Promise.all([page.goto(url), second.goto(url)]);

    for (const tab of [page, second]) {
      await expect(tab.locator('[data-payment-state]')).toHaveAttribute('data-payment-state', 'paid');
    }
    expect(confirmPosts.count, 'confirm POSTs from both tabs').toBe(1);
    // The tab that sent went through submitting; the other one only checked (its
    // first check, held by the server until the order changed, may already say paid).
    const senders = [page, second].filter((tab) => states.of(tab).includes('submitting'));
    expect(senders.length, 'tabs that went through submitting').toBe(1);
    expect((await stack.pgStats()).charges_by_order[orderId]).toBe(1);
  });
}
