// Impatient customers: double and triple clicks and a held Enter key make one
// order and one confirm POST. Each test first makes sure the repeated input did
// reach the page (a test whose clicks were swallowed would prove nothing).
import { Locator, Page } from '@playwright/test';
import { expect, test } from '../support/fixtures';
import { CartPage, ConfirmPage, PgWindow, holdPaymentNews } from '../support/pages';

/** Counts the clicks and key presses that reach the elements it watches, even
 *  once their page has navigated away (the counts live in the test, not the page). */
async function inputCounter(
  page: Page,
): Promise<{ watch(target: Locator): Promise<void>; clicks: number; keydowns: number; statesAtInput: string[] }> {
  const counter = {
    clicks: 0,
    keydowns: 0,
    /** The page's payment state when each input reached it. */
    statesAtInput: [] as string[],
    async watch(target: Locator) {
      await target.evaluate((element) => {
        const count = (window as unknown as { __countInput(kind: string, state: string): void }).__countInput;
        const state = () => document.querySelector('[data-payment-state]')?.getAttribute('data-payment-state') ?? '';
        element.addEventListener('click', () => count('click', state()));
        element.addEventListener('keydown', () => count('keydown', state()));
      });
    },
  };
  await page.context().exposeFunction('__countInput', (kind: string, state: string) => {
    if (kind === 'click') counter.clicks += 1;
    else counter.keydowns += 1;
    counter.statesAtInput.push(state);
  });
  return counter;
}

/** Holds the page's first step after Pay (its recent-order check) until the test
 *  lets it go, once every repeated click or key press has reached the page: on a
 *  busy machine they arrive slowly, and a page that moved on would swallow them.
 *  Returns what lets it go. */
async function holdFirstStep(page: Page): Promise<() => void> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  await page.route('**/api/orders/recent', async (route) => {
    await released;
    await route.continue();
  });
  return release;
}

/** Holds the answers to the payment window's card submissions (each has reached
 *  the PG) until the test lets them go, once both clicks of a double click have
 *  reached the card: on a busy machine the first submission's redirect could take
 *  the window away before the second click is dispatched, and a swallowed click
 *  proves nothing. Returns what lets them go. */
async function holdWindowAnswer(page: Page): Promise<() => void> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  await page.route(
    (url) => url.pathname === '/v1/window',
    async (route) => {
      if (route.request().method() !== 'POST') return route.fallback();
      // The PG's own answer (a redirect back to the shop), passed on unchanged.
      const response = await route.fetch({ maxRedirects: 0 });
      await released;
      // The browser drops the first submission's navigation when the second
      // replaces it; its answer then has nowhere to go.
      await route.fulfill({ response }).catch(() => {});
    },
  );
  return release;
}

/** Counts the orders the page asks the server to create. */
function countOrderCreations(page: Page): () => number {
  let created = 0;
  page.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/api/orders') created += 1;
  });
  return () => created;
}

async function finishPayment(page: Page): Promise<ConfirmPage> {
  const window = await PgWindow.opened(page);
  const confirm = await window.choose('approve');
  await confirm.expectState('paid');
  return confirm;
}

for (const [name, clickCount] of [['double', 2], ['triple', 3]] as const) {
  test(`a ${name} click on Pay creates one order`, async ({ page, confirmPosts }) => {
    const cart = new CartPage(page);
    await cart.open();
    const input = await inputCounter(page);
    await input.watch(cart.pay);
    const releaseFirstStep = await holdFirstStep(page);
    const creations = countOrderCreations(page);

    await cart.pay.click({ clickCount });

    await expect.poll(() => input.clicks, { message: 'clicks that reached Pay' }).toBe(clickCount);
    releaseFirstStep();
    await finishPayment(page);
    expect(creations(), 'orders the page asked for').toBe(1);
    expect(confirmPosts.count).toBe(1);
  });
}

test('Enter held down on Pay creates one order', async ({ page, confirmPosts }) => {
  const cart = new CartPage(page);
  await cart.open();
  await cart.pay.focus();
  const input = await inputCounter(page);
  await input.watch(cart.pay);
  const releaseFirstStep = await holdFirstStep(page);
  const creations = countOrderCreations(page);

  for (let repeat = 0; repeat < 8; repeat++) await page.keyboard.down('Enter');
  await page.keyboard.up('Enter');

  await expect.poll(() => input.keydowns, { message: 'key presses that reached Pay' }).toBe(8);
  expect(input.clicks, 'key presses that activated Pay').toBeGreaterThanOrEqual(2);
  releaseFirstStep();
  await finishPayment(page);
  expect(creations(), 'orders the page asked for').toBe(1);
  expect(confirmPosts.count).toBe(1);
});

test('a double click on the payment window card sends one confirm', async ({ page, stack, confirmPosts }) => {
  const cart = new CartPage(page);
  await cart.open();
  const window = await cart.payAndOpenWindow();
  const input = await inputCounter(page);
  await input.watch(window.card('approve'));
  const releaseWindowAnswer = await holdWindowAnswer(page);

  const clicking = window.card('approve').dblclick();

  await expect.poll(() => input.clicks, { message: 'clicks that reached the card' }).toBe(2);
  releaseWindowAnswer();
  await clicking;
  const confirm = await ConfirmPage.opened(page);
  await confirm.expectState('paid');
  expect(confirmPosts.count).toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
});

test('clicks and Enter on the confirm page while it is processing send nothing more', async ({
  page,
  stack,
  confirmPosts,
}) => {
  // The page learns nothing of the payment until every input has landed, and
  // from its first check on its clock stands still: however long the inputs
  // take to land, the payment is still in flight when they do.
  const inputsLanded = await holdPaymentNews(page);
  const cart = new CartPage(page);
  await cart.open();
  const confirm = await (await cart.payAndOpenWindow()).choose('approve');
  // Checking once the page's 3 s wait has passed, where its clock then stands.
  await confirm.expectState(/^(submitting|checking)$/);
  const input = await inputCounter(page);
  await input.watch(confirm.root);

  await confirm.heading.click({ clickCount: 3 });
  await confirm.root.dblclick();
  for (let repeat = 0; repeat < 5; repeat++) await page.keyboard.press('Enter');

  await expect.poll(() => input.clicks, { message: 'clicks that reached the page' }).toBe(5);
  await inputsLanded();
  // Every click and key press reached the page while the payment was in flight.
  const landedAfter = input.statesAtInput.filter((state) => !['submitting', 'checking'].includes(state));
  expect(landedAfter, 'states of inputs that landed when the payment was no longer in flight').toEqual([]);
  await confirm.expectState('paid');
  expect(confirmPosts.count).toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
});
