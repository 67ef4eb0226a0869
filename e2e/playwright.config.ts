import { defineConfig } from '@playwright/test';

// The files of the journeys that wait longest in real time.
const LONGEST = /(02-demo-40s|03-approval-70s|10-reload|27-busy-shop|33-sample-shop)\.spec\.ts$/;

// Each worker runs its own fake PG and order server (see support/stack.ts), so
// journeys run in parallel without sharing state. The long real-time journeys
// spend most of their time waiting, so more workers than cores is fine: on two
// cores, six workers leave about a quarter of the CPU idle.
export default defineConfig({
  testDir: './tests',
  workers: Number(process.env.PAYONCE_E2E_WORKERS ?? 6),
  projects: [
    // The journeys that wait longest in real time start first, so that none
    // of them starts last and holds up the end: the demo (which holds the page
    // to its time bounds, checking 15-17 s after the POST and paid within
    // 43 s: beside the others, in Chromium's headless shell, the CPU stays a
    // quarter idle and the page's timers fire within milliseconds), the
    // 70-second approval, a reload while checking, a busy shop, the sample
    // shop's customers (one waits on a 40-second PG).
    { name: 'longest, first', fullyParallel: true, testMatch: LONGEST },
    { name: 'journeys', fullyParallel: true, testIgnore: LONGEST },
  ],
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list'], ['json', { outputFile: 'test-results/results.json' }]],
  outputDir: 'test-results/artifacts',
  use: {
    browserName: 'chromium',
    launchOptions: {
      // Chromium's headless shell, as Playwright runs headless by default:
      // the same engine without the desktop browser's windowing, which on two
      // cores took the CPU the journeys wait on (the benches load the page in
      // Chromium itself).
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium-headless-shell',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
    trace: { mode: 'retain-on-failure', screenshots: false },
    screenshot: 'only-on-failure',
  },
});
