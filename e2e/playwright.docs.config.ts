import { defineConfig } from '@playwright/test';
import base from './playwright.config';

// Not part of the test suite: regenerates the book's screenshots (docs/screenshots).
//   cd e2e && npx playwright test -c playwright.docs.config.ts
// The run leaves a 70-second payment going at the end: it shows states and tests
// nothing, so it is the one place where the invariants are off.
export default defineConfig<{ checkInvariants: boolean }>({
  ...base,
  projects: undefined,
  testDir: './docs',
  workers: 1,
  reporter: 'list',
  use: { ...base.use, viewport: { width: 720, height: 560 }, checkInvariants: false },
});
