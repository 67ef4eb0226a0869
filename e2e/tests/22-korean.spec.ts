// A Korean browser gets the shop, the PG's window and every outcome in Korean,
// with won amounts as Koreans write them; the switch in the header changes the
// language and is remembered.
import { expect, test } from '../support/fixtures';
import { CartPage, ConfirmPage, checkout, holdPaymentNews } from '../support/pages';

test.describe('in a Korean browser', () => {
  test.use({ locale: 'ko-KR' });

  test('the cart, the window and a paid order speak Korean', async ({ page }) => {
    const cart = new CartPage(page);
    await page.goto('/');
    await expect(page.locator('html')).toHaveAttribute('lang', 'ko');
    await expect(page).toHaveTitle('장바구니 — payonce');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('장바구니');
    await expect(page.getByRole('heading', { level: 2, name: '핸드드립 세트' })).toBeVisible();
    await expect(cart.total).toHaveText('12,900원');
    await expect(cart.pay).toHaveText('12,900원 결제하기');

    await cart.pay.click();
    await page.waitForURL(/\/v1\/window\?/);
    await expect(page.locator('html')).toHaveAttribute('lang', 'ko');
    await expect(page.getByText('12,900원')).toBeVisible();
    await expect(page.getByRole('button', { name: '결제창 닫기' })).toBeVisible();
    await page.locator('[data-scenario="approve"]').click();

    const paid = await ConfirmPage.opened(page);
    await paid.expectState('paid');
    await expect(paid.heading).toHaveText('결제가 완료되었습니다');
    await expect(paid.root).toContainText('12,900원을 결제했습니다');
  });

  test('a declined card is explained in Korean, by its code', async ({ page }) => {
    const declined = await checkout(page, 'decline_reject_card');
    await declined.expectState('failed');
    await expect(declined.heading).toHaveText('결제에 실패했습니다');
    await expect(declined.failureMessage).toHaveText('카드사가 이 결제를 거절했습니다. 결제되지 않았습니다.');
    await expect(declined.root).toContainText('REJECT_CARD_PAYMENT');
  });

  test('a slow payment is checked in Korean, then shown paid', async ({ page }) => {
    // The page learns nothing of the payment until the test has read the
    // checking page (a PG slower than the page's 3 s wait, raced against a
    // busy machine, could be done before the test looked).
    const letItGo = await holdPaymentNews(page);
    const confirm = await checkout(page, 'approve');
    await confirm.expectState('checking', 10_000);
    await expect(confirm.heading).toHaveText('결제를 확인하고 있습니다');
    await expect(page.getByTestId('check-count')).toHaveText(/^확인 \d+\/\d+회$/);
    await letItGo();
    await confirm.expectState('paid', 20_000);
    await expect(confirm.heading).toHaveText('결제가 완료되었습니다');
  });

  test('a payment the window outlasts is unresolved, in Korean', async ({ page, stack }) => {
    // The PG holds the payment past the whole checking window (3 s + 12 × 0.5 s);
    // recovery settles it once the PG lets it go.
    const letPgFinish = await stack.holdPg();
    const confirm = await checkout(page, 'approve');
    await confirm.expectState('unresolved', 20_000);
    await expect(confirm.heading).toHaveText('아직 결제를 확인하지 못했습니다');
    await expect(page.getByRole('link', { name: '주문 보기' })).toBeVisible();
    await letPgFinish();
  });
});

test('the language switch changes the page at once and is remembered', async ({ page }) => {
  const cart = new CartPage(page);
  await cart.open();
  const switcher = page.getByTestId('lang-switch');
  // Named by what it shows, that part marked as Korean.
  await expect(switcher).toHaveAccessibleName('Change language: 한국어');
  await expect(switcher.locator('[lang="ko"]')).toHaveText('한국어');

  await switcher.click();

  await expect(page.locator('html')).toHaveAttribute('lang', 'ko');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('장바구니');
  await expect(cart.pay).toHaveText('12,900원 결제하기');
  await page.reload();
  await expect(cart.pay).toHaveText('12,900원 결제하기');
  await page.getByRole('navigation').getByRole('link', { name: '주문 내역' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('주문 내역');

  await page.getByTestId('lang-switch').click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Your orders');
  await page.goto('/');
  await expect(cart.pay).toHaveText('Pay ₩12,900');
});
