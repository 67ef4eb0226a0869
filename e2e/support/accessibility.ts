// axe-core's audit of a page as it stands: WCAG 2.0 to 2.2, A and AA, on a
// desktop and on a 320 CSS px screen (what 400 % zoom of a 1280 px window
// gives), with no violation allowed and nothing wider than the screen.
import AxeBuilder from '@axe-core/playwright';
import { type Page, expect } from '@playwright/test';

const WIDTHS = [1280, 320];
const RULES = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/** axe-core's violations on `page` at each width, and how far it scrolls sideways. */
export async function audit(page: Page, what: string): Promise<void> {
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
