// The PG refusing a confirm before processing it (429, 403 consecutive requests)
// is a definitive failure: nothing was charged, and the page says so.
import { expect, test } from '../support/fixtures';
import { Scenario, checkout } from '../support/pages';

const refusals: [Scenario, string][] = [
  ['rate_limited_429', 'TOO_MANY_REQUESTS'],
  ['forbidden_consecutive_403', 'FORBIDDEN_CONSECUTIVE_REQUEST'],
];

for (const [scenario, code] of refusals) {
  test(`${code} from the PG fails as not charged`, async ({ page, stack, confirmPosts, states }) => {
    const confirm = await checkout(page, scenario);

    await confirm.expectState('failed');
    await expect(confirm.failureMessage).toContainText('You have not been charged');
    await expect(page.getByText(code)).toBeVisible();
    expect(states.sequence).toEqual(['submitting', 'failed']);
    expect(confirmPosts.count).toBe(1);
    expect((await stack.pgStats()).charges_by_order[confirm.orderId] ?? 0).toBe(0);
  });
}
