// A reload while checking first asks whether to leave (the page is still paying),
// then finds the attempt stored before the POST left: it resumes checking and
// never sends the POST again.
import { Dialog } from '@playwright/test';
import { expect, test } from '../support/fixtures';
import { checkout } from '../support/pages';

test.use({ timings: 'real' });

test('a reload during checking asks first, then resumes checking without a new POST', async ({
  page,
  stack,
  confirmPosts,
  states,
}) => {
  test.setTimeout(90_000);
  const dialogs: { type: string; state: string | undefined }[] = [];
  page.on('dialog', (dialog: Dialog) => {
    // The page is frozen while the question is up: its state is the last one it showed.
    dialogs.push({ type: dialog.type(), state: states.sequence.at(-1) });
    void dialog.accept();
  });
  const confirm = await checkout(page, 'approve_40s');
  await confirm.expectState('checking', 30_000);
  // Browsers ask before leaving only a page the customer has used.
  await confirm.heading.click();

  await page.reload();

  expect(dialogs, 'the leave-this-page question, while paying').toEqual([{ type: 'beforeunload', state: 'checking' }]);
  await confirm.expectState('checking');
  await confirm.expectState('paid', 35_000);
  expect(states.byPageLoad).toEqual([
    ['submitting', 'checking'],
    ['checking', 'paid'],
  ]);
  expect(confirmPosts.count).toBe(1);
  expect((await stack.pgStats()).charges_by_order[confirm.orderId]).toBe(1);
});
