// Page objects: what a customer sees and does, by page.
import { Locator, Page, expect } from '@playwright/test';
import { stopPageClock, takePageClock } from './clock';

/** The ids of the fake PG window's test cards. */
export type Scenario =
  | 'approve'
  | 'approve_40s'
  | 'approve_70s'
  | 'decline_reject_card'
  | 'decline_invalid_expiration'
  | 'error_500_then_charge'
  | 'reset_after_charge'
  | 'rate_limited_429'
  | 'forbidden_consecutive_403'
  | 'cancel'
  | 'approve_no_partial_refund'
  | 'approve_refund_period_over';

export class CartPage {
  readonly pay: Locator;
  readonly total: Locator;
  readonly recentOrderDialog: Locator;

  constructor(readonly page: Page) {
    this.pay = page.getByTestId('pay');
    this.total = page.getByTestId('cart-total');
    this.recentOrderDialog = page.getByRole('dialog');
  }

  async open(): Promise<void> {
    await this.page.goto('/');
    await expect(this.pay).toBeEnabled();
    // "Pay ₩12,900", or "12,900원 결제하기" in Korean: the cart has its products.
    await expect(this.pay).toHaveText(/^Pay ₩|원 결제하기$/);
  }

  /** Chooses KakaoPay instead of a card, as a customer does, by the choice's name (in either language). */
  async chooseKakaoPay(name: string | RegExp = /^(KakaoPay|카카오페이)$/): Promise<void> {
    await this.page.getByRole('radio', { name }).check();
  }

  /** Clicks Pay with KakaoPay chosen and waits for KakaoPay's window. */
  async payAndOpenKakaoPay(): Promise<KakaoPayWindow> {
    await this.pay.click();
    return KakaoPayWindow.opened(this.page);
  }

  /** Clicks Pay and waits for the PG's payment window. */
  async payAndOpenWindow(): Promise<PgWindow> {
    await this.pay.click();
    return PgWindow.opened(this.page);
  }
}

export class PgWindow {
  private constructor(readonly page: Page) {}

  static async opened(page: Page): Promise<PgWindow> {
    await page.waitForURL(/\/v1\/window\?/);
    return new PgWindow(page);
  }

  card(scenario: Scenario): Locator {
    return this.page.locator(`[data-scenario="${scenario}"]`);
  }

  /** Closes the window (its ✕), as a customer who changed their mind: back to the shop's fail page. */
  async close(): Promise<void> {
    await this.page.locator('[data-action="close"]').click();
    await this.page.waitForURL(/\/pay\/fail\?/);
  }

  /** Chooses a test card; the window sends the customer back to the shop. */
  async choose(scenario: Scenario): Promise<ConfirmPage> {
    await this.card(scenario).click();
    return ConfirmPage.opened(this.page);
  }
}

/** The choices of KakaoPay's fake window (`data-choice`). */
export type KakaoPayChoice =
  | 'approve'
  | 'approve_40s'
  | 'approve_70s'
  | 'decline_reject_card'
  | 'error_500_then_charge'
  | 'reset_after_charge'
  | 'wrong_password'
  | 'quit';

/** KakaoPay's window: its QR page on a PC (`mode=pc`), KakaoPay itself on a phone (`mode=mobile`). */
export class KakaoPayWindow {
  private constructor(readonly page: Page) {}

  static async opened(page: Page): Promise<KakaoPayWindow> {
    await page.waitForURL(/\/kakaopay\/window\//);
    return new KakaoPayWindow(page);
  }

  /** Which of ready's pages the shop opened for this device. */
  get mode(): string | null {
    return new URL(this.page.url()).searchParams.get('mode');
  }

  choice(choice: KakaoPayChoice): Locator {
    return this.page.locator(`[data-choice="${choice}"]`);
  }

  /** Chooses in the window; KakaoPay sends the customer back to the shop's approval URL. */
  async choose(choice: KakaoPayChoice): Promise<ConfirmPage> {
    await this.choice(choice).click();
    return ConfirmPage.opened(this.page);
  }

  /** Ends the window without paying (`quit`: cancel_url; `wrong_password`: fail_url). */
  async leave(choice: 'quit' | 'wrong_password'): Promise<void> {
    await this.choice(choice).click();
    await this.page.waitForURL(/\/pay\/fail\?/);
  }
}

/** From the cart, with KakaoPay chosen, to KakaoPay's window. */
export async function openKakaoPay(page: Page): Promise<KakaoPayWindow> {
  const cart = new CartPage(page);
  await cart.open();
  await cart.chooseKakaoPay();
  return cart.payAndOpenKakaoPay();
}

/** From the cart through KakaoPay's window with one choice, to the confirm page. */
export async function checkoutWithKakaoPay(page: Page, choice: KakaoPayChoice): Promise<ConfirmPage> {
  return (await openKakaoPay(page)).choose(choice);
}

export class ConfirmPage {
  readonly root: Locator;
  /** The order id in the URL the PG window sent the customer to. */
  readonly orderId: string;

  private constructor(readonly page: Page) {
    this.root = page.locator('[data-payment-state]');
    this.orderId = new URL(page.url()).searchParams.get('orderId')!;
  }

  static async opened(page: Page): Promise<ConfirmPage> {
    await page.waitForURL(/\/pay\/success\?/);
    return new ConfirmPage(page);
  }

  async expectState(state: string | RegExp, timeout?: number): Promise<void> {
    await expect(this.root).toHaveAttribute('data-payment-state', state, { timeout });
  }

  get heading(): Locator {
    return this.root.getByRole('heading', { level: 1 });
  }

  get failureMessage(): Locator {
    return this.page.getByTestId('failure-message');
  }
}

export class OrderPage {
  readonly status: Locator;

  constructor(readonly page: Page) {
    this.status = page.locator('[data-order-status]');
  }

  async open(orderId: string): Promise<void> {
    await this.page.goto(`/orders/${orderId}`);
  }
}

/** From the cart through the payment window with one test card, stopping short
 *  of the confirm page: the URL the window sends the customer back to, unopened. */
export async function successUrl(page: Page, scenario: Scenario): Promise<string> {
  let location: string | undefined;
  // The window answers its form with a redirect to the success URL; a route sees
  // only the request that was redirected, so the form's answer itself is held.
  await page.route('**/v1/window', async (route) => {
    if (route.request().method() !== 'POST') return route.continue();
    location = (await route.fetch({ maxRedirects: 0 })).headers()['location'];
    await route.fulfill({ contentType: 'text/html', body: '<p>Back to the shop held by the test.</p>' });
  });
  const cart = new CartPage(page);
  await cart.open();
  await (await cart.payAndOpenWindow()).card(scenario).click();
  await expect.poll(() => location, { message: 'the window sent the customer back' }).toMatch(/\/pay\/success\?/);
  await page.unroute('**/v1/window');
  return new URL(location!, page.url()).toString();
}

/** From the cart to the confirm page with one test card. */
export async function checkout(page: Page, scenario: Scenario): Promise<ConfirmPage> {
  const cart = new CartPage(page);
  await cart.open();
  const window = await cart.payAndOpenWindow();
  return window.choose(scenario);
}

/** Holds what the page learns of its payment until the returned function is
 *  called, so a test's steps never race a PG's latency on a busy machine: the
 *  confirm reaches the server at once, but its answer, and the page's checks
 *  of the order after it, wait. The page's look at the order before it sends
 *  is answered. From the first held check on (the page is checking) the page's
 *  clock stands still, so its checking window cannot run out while the test
 *  holds. Call before the page loads: it takes the page's clock. */
export async function holdPaymentNews(page: Page): Promise<() => Promise<void>> {
  await takePageClock(page);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let confirmSent = false;
  let holding = true;
  let clockStopped: Promise<() => Promise<void>> | undefined;
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url().endsWith('/confirm')) confirmSent = true;
  });
  await page.route('**/api/orders/*/confirm', async (route) => {
    const response = await route.fetch();
    await released;
    // The page may have stopped waiting for it (and checks instead), or reloaded.
    await route.fulfill({ response }).catch(() => {});
  });
  await page.route(/\/api\/orders\/ord_[^/?]+(\?.*)?$/, async (route) => {
    if (route.request().method() === 'GET' && confirmSent && holding) {
      if (!clockStopped) {
        clockStopped = stopPageClock(page);
        // Its failure is the release's to report, not an unhandled rejection's.
        clockStopped.catch(() => {});
      }
      await released;
    }
    await route.continue().catch(() => {});
  });
  return async () => {
    // A check after this one is neither held nor stops the clock.
    holding = false;
    if (clockStopped) await (await clockStopped)();
    release();
  };
}
