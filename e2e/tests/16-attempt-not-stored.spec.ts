// The browser refuses to store the attempt (storage full or disabled), and the
// customer reloads while the payment is being checked. With nothing stored, the
// page asks the server first: the server has the payment, so the page checks it
// and never sends the POST again.
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

  reloading();
  await page.reload();

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
