import { defineConfig } from '@playwright/test';
import base from './playwright.config';

// Not part of the test suite: regenerates the README's screenshots.
//   cd e2e && npx playwright test -c playwright.docs.config.ts
export default defineConfig({
  ...base,
  projects: undefined,
  testDir: './docs',
  workers: 1,
  reporter: 'list',
  use: { ...base.use, viewport: { width: 720, height: 560 } },
});
