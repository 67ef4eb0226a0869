// The page opens the PG's window as a Toss merchant's page does: it loads the
// SDK `/api/config` names and calls `requestPayment`. The SDK refuses bad
// arguments with Toss's codes before any window opens; the window can be closed.
import { expect, test } from '../support/fixtures';
import { CartPage } from '../support/pages';

test('Pay loads the PG SDK and the window opens for the order, with the client key', async ({ page, stack }) => {
  const scripts: string[] = [];
  page.on('request', (request) => {
    if (request.resourceType() === 'script') scripts.push(request.url());
  });
  const cart = new CartPage(page);
  await cart.open();
  const window = await cart.payAndOpenWindow();

  expect(scripts).toContain(`${stack.pg.url}/v2/standard`);
  const opened = new URL(page.url());
  expect(opened.origin).toBe(stack.pg.url);
  expect(opened.searchParams.get('clientKey')).toBe('test_ck_payonce_fake_pg_0000');
  expect(opened.searchParams.get('customerKey')).toBe('@@ANONYMOUS');
  expect(opened.searchParams.get('amount')).toBe('12900');
  const confirm = await window.choose('approve');
  await confirm.expectState('paid');
});

test('closing the payment window brings the customer back, and nothing is charged', async ({ page, stack }) => {
  const cart = new CartPage(page);
  await cart.open();
  const window = await cart.payAndOpenWindow();
  const orderId = new URL(page.url()).searchParams.get('orderId')!;

  await window.close();

  expect(new URL(page.url()).searchParams.get('code')).toBe('PAY_PROCESS_CANCELED');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('You cancelled the payment');
  await expect(page.getByTestId('charge-status')).toHaveText('Nothing was charged.');
  expect((await stack.pgStats()).charges_by_order[orderId] ?? 0).toBe(0);
});

test('the SDK refuses bad arguments with Toss codes and opens no window', async ({ page, stack }) => {
  const cart = new CartPage(page);
  await cart.open();
  // The shop's CSP allows scripts from the SDK's origin: the page can load it again here.
  await page.addScriptTag({ url: `${stack.pg.url}/v2/standard` });
  const codes = await page.evaluate(async () => {
    const toss = (window as any).TossPayments;
    const good = {
      method: 'CARD',
      amount: { currency: 'KRW', value: 12900 },
      orderId: 'order-sdk-check',
      orderName: 'Mug',
      successUrl: `${location.origin}/pay/success`,
      failUrl: `${location.origin}/pay/fail`,
    };
    const refusal = async (change: object) => {
      const payment = toss('test_ck_payonce_fake_pg_0000').payment({ customerKey: toss.ANONYMOUS });
      return payment.requestPayment({ ...good, ...change }).then(
        () => 'opened',
        (error: { code: string }) => error.code,
      );
    };
    const thrown = (call: () => unknown) => {
      try {
        call();
        return 'none';
      } catch (error) {
        return (error as { code: string }).code;
      }
    };
    return {
      clientKey: thrown(() => toss('test_ck_someone_else')),
      customerKey: thrown(() => toss('test_ck_payonce_fake_pg_0000').payment({ customerKey: 'x' })),
      orderId: await refusal({ orderId: undefined }),
      shortOrderId: await refusal({ orderId: 'abc' }),
      zero: await refusal({ amount: { currency: 'KRW', value: 0 } }),
      fraction: await refusal({ amount: { currency: 'KRW', value: 10.5 } }),
      currency: await refusal({ amount: { currency: 'USD', value: 10 } }),
      successUrl: await refusal({ successUrl: '/pay/success' }),
      failUrl: await refusal({ failUrl: 'javascript:alert(1)' }),
      method: await refusal({ method: 'TRANSFER' }),
    };
  });

  expect(codes).toEqual({
    clientKey: 'INVALID_CLIENT_KEY',
    customerKey: 'INVALID_CUSTOMER_KEY',
    orderId: 'INVALID_PARAMETERS',
    shortOrderId: 'INVALID_PARAMETERS',
    zero: 'BELOW_ZERO_AMOUNT',
    fraction: 'INVALID_AMOUNT_VALUE',
    currency: 'INVALID_AMOUNT_CURRENCY',
    successUrl: 'INCORRECT_SUCCESS_URL_FORMAT',
    failUrl: 'INCORRECT_FAIL_URL_FORMAT',
    method: 'NOT_SUPPORTED_METHOD',
  });
  expect(new URL(page.url()).pathname, 'no window opened').toBe('/');
});

test('a window reopened for the same order with another amount returns to the fail page', async ({ page, stack }) => {
  const cart = new CartPage(page);
  await cart.open();
  await page.addScriptTag({ url: `${stack.pg.url}/v2/standard` });
  const orderId = `order-mismatch-${Date.now()}`;
  const request = (value: number) =>
    page.evaluate(
      ([orderId, value]) => {
        const toss = (window as any).TossPayments;
        void toss('test_ck_payonce_fake_pg_0000')
          .payment({ customerKey: toss.ANONYMOUS })
          .requestPayment({
            method: 'CARD',
            amount: { currency: 'KRW', value },
            orderId,
            orderName: 'Mug',
            successUrl: `${location.origin}/pay/success`,
            failUrl: `${location.origin}/pay/fail`,
          });
      },
      [orderId, value] as const,
    );
  await request(12_900);
  await page.waitForURL(/\/v1\/window\?/);
  await page.goBack();
  await expect(cart.pay).toBeEnabled();
  await page.addScriptTag({ url: `${stack.pg.url}/v2/standard` });

  await request(100);

  await page.waitForURL(/\/pay\/fail\?/);
  expect(new URL(page.url()).searchParams.get('code')).toBe('PAY_PROCESS_ABORTED');
  await expect(page.getByTestId('pay-fail')).toContainText('The payment was stopped before it finished.');
});
