// The page's own clock: its timers and `Date`. A journey that holds what the
// page is waiting for stops this clock for as long as it holds, so the page's
// waits (15 s for the confirm's answer, the checking window, each check's 5 s)
// cannot run out while the journey's steps take their time on a busy machine.
// Playwright's clock is the browser context's: every page and frame in it.
import type { Page } from '@playwright/test';

/** Puts the page's timers and `Date` under the test's control, running at their
 *  natural pace until stopped. Before the page loads: its scripts must see them. */
export async function takePageClock(page: Page): Promise<void> {
  await page.clock.install();
}

/** Stops the page's clock where it stands; returns what starts it again. */
export async function stopPageClock(page: Page): Promise<() => Promise<void>> {
  // `pauseAt` names the time to stop at: the page's now, a moment ahead for the
  // call's way there. On a busy machine the clock can pass that moment first,
  // which Playwright refuses ("to the past"): then it is asked again, with twice
  // the lead. A page reloading meanwhile has no context to ask: asked again too.
  for (let lead = 100; ; lead *= 2) {
    try {
      const now = await page.evaluate(() => Date.now());
      await page.clock.pauseAt(now + lead);
      break;
    } catch (error) {
      if (!/to the past|context was destroyed|navigat/i.test(String(error))) throw error;
    }
  }
  return () => page.clock.resume();
}
