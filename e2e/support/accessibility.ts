// axe-core's audit of a page as it stands: WCAG 2.0 to 2.2, A and AA, on a
// desktop and on a 320 CSS px screen (what 400 % zoom of a 1280 px window
// gives), with no violation allowed and nothing wider than the screen.
import AxeBuilder from '@axe-core/playwright';
import { type Page, expect, test } from '@playwright/test';

const WIDTHS = [1280, 320];
const RULES = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
/** What one audit (a full axe-core run at each width) may take while the other
 *  workers keep the machine busy: several seconds alone, many times that on a
 *  loaded core. Each audit adds it to its test's time, so a test's time grows
 *  with the pages it audits instead of being guessed once for all of them. */
const AUDIT_ALLOWANCE_MS = 30_000;

/** axe-core's violations on `page` at each width, and how far it scrolls sideways. */
export async function audit(page: Page, what: string): Promise<void> {
  test.info().setTimeout(test.info().timeout + AUDIT_ALLOWANCE_MS);
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 800 });
    const { violations, passes } = await new AxeBuilder({ page }).withTags(RULES).analyze();
    expect(passes.length, `${what}: axe-core checked something`).toBeGreaterThan(10);
    const found = violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
    expect(found, `${what} at ${width} px: axe-core's violations`).toEqual([]);
    const { sideways, widest } = await page.evaluate(() => {
      const width = document.documentElement.clientWidth;
      const name = (element: Element) => `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''}.${[...element.classList].join('.')}`;
      // What sticks out, leaving aside what scrolls inside a box of its own.
      const scrolledInside = (element: Element) => {
        for (let box = element.parentElement; box; box = box.parentElement) {
          if (['auto', 'scroll'].includes(getComputedStyle(box).overflowX)) return true;
        }
        return false;
      };
      const widest = [...document.querySelectorAll('body *')]
        .filter((element) => element.getBoundingClientRect().right > width + 0.5 && !scrolledInside(element))
        .map(name)
        .slice(0, 5);
      return { sideways: document.documentElement.scrollWidth - width, widest };
    });
    expect(sideways, `${what} at ${width} px scrolls sideways (past the screen: ${widest.join(', ')})`).toBeLessThanOrEqual(0);
  }
  await page.setViewportSize({ width: WIDTHS[0], height: 800 });
}

/** A still copy of the page as it stands now, in a page of its own, to audit
 *  later: for a state that lasts its seconds (processing, checking), so that the
 *  audit, however long it takes on a busy machine, audits that state, and runs
 *  once the test holds nothing the page or the server waits on. The copy has
 *  the page's markup and styles without its scripts; it is no payment page (its
 *  payment state is left out, so no journey counts it as one). */
export async function stillCopy(page: Page): Promise<{ audit(what: string): Promise<void> }> {
  const markup = (await page.content())
    .replace(/<script\b[\s\S]*?<\/script>/gi, '')
    .replace(/ data-payment-state="[^"]*"/g, '');
  const copy = await page.context().newPage();
  const url = new URL('/still-copy-of-a-page', page.url()).toString();
  await copy.route(url, (route) => route.fulfill({ contentType: 'text/html; charset=utf-8', body: markup }));
  await copy.goto(url);
  return {
    async audit(what: string) {
      await audit(copy, what);
      await copy.close();
    },
  };
}
