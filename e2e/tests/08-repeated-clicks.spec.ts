// Impatient customers: double and triple clicks and a held Enter key make one
// order and one confirm POST.
import { APIRequestContext, Page } from '@playwright/test';
import { expect, test } from '../support/fixtures';
import { CartPage, ConfirmPage, PgWindow } from '../support/pages';

async function orderCount(request: APIRequestContext, baseUrl: string): Promise<number> {
  return (await (await request.get(`${baseUrl}/api/orders`)).json()).length;
}

async function finishPayment(page: Page): Promise<ConfirmPage> {
  const window = await PgWindow.opened(page);
  const confirm = await window.choose('approve');
  await confirm.expectState('paid');
  return confirm;
}

for (const [name, clickCount] of [['double', 2], ['triple', 3]] as const) {
  test(`a ${name} click on Pay creates one order`, async ({ page, context, stack, confirmPosts }) => {
    const cart = new CartPage(page);
    await cart.open();

    await cart.pay.click({ clickCount });

    await finishPayment(page);
    expect(await orderCount(context.request, stack.url)).toBe(1);
    expect(confirmPosts.count).toBe(1);
  });
}

test('Enter held down on Pay creates one order', async ({ page, context, stack, confirmPosts }) => {
  const cart = new CartPage(page);
  await cart.open();
  await cart.pay.focus();

  for (let repeat = 0; repeat < 8; repeat++) await page.keyboard.down('Enter');
  await page.keyboard.up('Enter');

  await finishPayment(page);
  expect(await orderCount(context.request, stack.url)).toBe(1);
  expect(confirmPosts.count).toBe(1);
});

test('a double click on the payment window card sends one confirm', async ({ page, stack, confirmPosts }) => {
  const cart = new CartPage(page);
  await cart.open();
  const window = await cart.payAndOpenWindow();

  await window.card('approve').dblclick();

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
  await stack.configurePg({ latency_ms: 2_000 });
  const cart = new CartPage(page);
  await cart.open();
  const confirm = await (await cart.payAndOpenWindow()).choose('approve');
  await confirm.expectState('submitting');

  await confirm.heading.click({ clickCount: 3 });
  await confirm.root.dblclick();
  for (let repeat = 0; repeat < 5; repeat++) await page.keyboard.press('Enter');

  await confirm.expectState('paid');
  expect(confirmPosts.count).toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
});
