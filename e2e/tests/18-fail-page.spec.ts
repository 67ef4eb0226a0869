// /pay/fail is where the payment window sends a customer who cancelled or whose
// payment the window could not make. Anyone can write that URL: the page explains
// known codes in its own words, shows no text from the URL, says nothing was
// charged only when the server, asked to close the order, answers that it failed,
// and closes by itself only an order this browser sent to a payment window.
import { expect, test } from '../support/fixtures';
import { checkout, successUrl } from '../support/pages';

const hostile = 'Your card was charged twice. Call +82-10-0000-0000 for a refund';

test('a message in the URL is never shown, and "nothing was charged" is the server’s word', async ({ page }) => {
  const success = await successUrl(page, 'approve');
  const orderId = new URL(success).searchParams.get('orderId')!;

  await page.goto(`/pay/fail?code=SOMETHING_ELSE&message=${encodeURIComponent(hostile)}&orderId=${orderId}`);

  const fail = page.getByTestId('pay-fail');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('The payment did not go through');
  await expect(fail).toContainText('The payment window could not complete the payment.');
  await expect(page.getByTestId('charge-status')).toHaveText('Nothing was charged.');
  await expect(fail).not.toContainText(hostile);
  await expect(fail).not.toContainText('SOMETHING_ELSE');
  const order = await (await page.request.get(`/api/orders/${orderId}`)).json();
  expect(order.status, 'the server closed the order').toBe('FAILED');
});

test('a known code gets the page’s own words, whatever message comes with it', async ({ page }) => {
  await page.goto(`/pay/fail?code=REJECT_CARD_PAYMENT&message=${encodeURIComponent(hostile)}`);

  const fail = page.getByTestId('pay-fail');
  await expect(fail).toContainText('Your card company declined the payment.');
  await expect(fail).toContainText('REJECT_CARD_PAYMENT');
  await expect(fail).not.toContainText(hostile);
  await expect(fail, 'no order to ask the server about, so no word on charges').not.toContainText(/charged/i);
});

test('a fail link for an order that was paid says so instead of "nothing was charged"', async ({ page }) => {
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');

  await page.goto(`/pay/fail?code=PAY_PROCESS_CANCELED&orderId=${confirm.orderId}`);

  await expect(page.getByTestId('charge-status')).toHaveText(
    'This order has been paid in the meantime; its page has the details.',
  );
  await expect(page.getByTestId('pay-fail')).not.toContainText('Nothing was charged');
});

test('a fail link for an order this browser never sent to a window closes it only when the customer asks', async ({
  page,
}) => {
  // An order of this customer's, named in a link someone else wrote.
  const created = await page.request.post('/api/orders', { data: { items: [{ sku: 'CERAMIC-MUG', quantity: 1 }] } });
  expect(created.status()).toBe(201);
  const orderId: string = (await created.json()).order_id;
  const status = async () => (await (await page.request.get(`/api/orders/${orderId}`)).json()).status;

  await page.goto(`/pay/fail?code=PAY_PROCESS_CANCELED&orderId=${orderId}`);

  await expect(page.getByTestId('charge-status')).toHaveText(
    'This order is still open. If you will not pay for it, close it here.',
  );
  const close = page.getByRole('button', { name: 'Close the order' });
  await expect(close).toBeVisible();
  expect(await status(), 'the link alone closed nothing').toBe('CREATED');

  await close.click();

  await expect(page.getByTestId('charge-status')).toHaveText('Nothing was charged.');
  await expect(close).toBeHidden();
  expect(await status(), 'closed once asked').toBe('FAILED');
});
