import { defineConfig } from '@playwright/test';

// Each worker runs its own fake PG and order server (see support/stack.ts), so
// journeys run in parallel without sharing state. The long real-time journeys
// spend most of their time waiting, so more workers than cores is fine: on two
// cores, six workers leave about a quarter of the CPU idle.
export default defineConfig({
  testDir: './tests',
  workers: Number(process.env.PAYONCE_E2E_WORKERS ?? 6),
  projects: [
    // The demo holds the page to its time bounds in real time (checking 15-17 s
    // after the POST, paid within 43 s). Listed first, it starts first, beside
    // the other journeys: in Chromium's headless shell they leave the CPU a
    // quarter idle, and a timer of the page fires within milliseconds.
    { name: 'demo', testMatch: /02-demo-40s/ },
    { name: 'journeys', fullyParallel: true, testIgnore: /02-demo-40s/ },
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
