// The page stores its attempt before the confirm POST leaves, so a reload finds
// it. And when the browser refuses to store it (storage full or disabled) and
// the customer reloads while the payment is being checked, the page asks the
// server first: the server has the payment, so the page checks it and never
// sends the POST again.
import { expect, test } from '../support/fixtures';
import { checkout, holdPaymentNews } from '../support/pages';

test('a reload after the attempt could not be stored checks the payment without a second POST', async ({
  page,
  context,
  stack,
  confirmPosts,
  states,
}) => {
  await context.addInitScript(() => {
    const setItem = Storage.prototype.setItem;
    Storage.prototype.setItem = function (key: string, value: string) {
      if (key.startsWith('payonce.attempt.')) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      return setItem.call(this, key, value);
    };
  });
  page.on('dialog', (dialog) => dialog.accept());
  // The page learns nothing of the payment before the reload (a busy machine
  // once let a 5 s PG finish first).
  const reloading = await holdPaymentNews(page);
  await stack.configurePg({ latency_ms: 5_000 });
  const confirm = await checkout(page, 'approve');
  await confirm.expectState('checking');
  expect(await page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('payonce.attempt.'))))
    .toEqual([]);

  // Reloaded first, then the news let go: released before, a held check could
  // still bring "paid" to the old page while the reload is on its way.
  await page.reload();
  await reloading();

  await confirm.expectState('paid', 20_000);
  const [beforeReload, afterReload, ...more] = states.byPageLoad;
  expect(beforeReload).toEqual(['submitting', 'checking']);
  // The reloaded page asks the server and never submits: it shows "checking" while
  // the PG is still charging, or "paid" at once when a busy machine took longer to
  // load it than the PG took to charge.
  expect([['checking', 'paid'], ['paid']]).toContainEqual(afterReload);
  expect(more).toEqual([]);
  expect(confirmPosts.count).toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
});

test('the attempt is stored, with the key the confirm carries, before the confirm POST leaves', async ({
  page,
  confirmPosts,
}) => {
  const stored: { header: string | null; body: unknown; attempt: unknown }[] = [];
  await page.route('**/api/orders/*/confirm', async (route) => {
    const request = route.request();
    const orderId = new URL(request.url()).pathname.split('/').at(-2)!;
    // The POST is held here, not yet at the server: what the page stored is read now.
    const attempt = await page.evaluate((key) => localStorage.getItem(key), `payonce.attempt.${orderId}`);
    stored.push({ header: request.headers()['idempotency-key'] ?? null, body: request.postDataJSON(), attempt });
    await route.continue();
  });

  const confirm = await checkout(page, 'approve');
  await confirm.expectState('paid');

  expect(stored).toHaveLength(1);
  const [{ header, body, attempt }] = stored;
  expect(attempt, 'an attempt stored before the POST left').not.toBeNull();
  const saved = JSON.parse(attempt as string);
  expect(saved).toMatchObject({ order_id: confirm.orderId, idempotency_key: header });
  expect(body).toMatchObject({ payment_key: saved.payment_key, amount: saved.amount });
  expect(confirmPosts.count).toBe(1);
});
