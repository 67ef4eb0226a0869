// Makes the pages a customer lands on alone (the cart, cart.html; a shop's
// checkout, checkout.html) prefetch the whole app's JS and wasm. The page the
// PG window sends the customer back to (/pay/success) is the whole app, so it
// then starts from the browser's cache instead of a cold download right when
// the payment is being confirmed. The prefetch starts only once Pay is drawn
// (the page has its data) and the browser is idle: on a slow line, sooner
// would slow the page's own requests (a checkout's claim took 0.2 s longer).
// Usage: node scripts/prefetch-app.mjs dist cart.html checkout.html
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const [dir, ...pages] = process.argv.slice(2);
const index = readFileSync(path.join(dir, 'index.html'), 'utf8');
// Its <link>s, as Trunk writes them minified (attributes in any order, values unquoted).
const assets = [...index.matchAll(/<link\b[^>]*>/g)]
  .map(([link]) => link)
  .filter((link) => /\brel="?(?:modulepreload|preload)\b/.test(link))
  .map((link) => link.match(/\bhref="?([^"\s>]+)/)[1]);
if (assets.length !== 2) {
  throw new Error(`expected the whole app's JS and wasm preloaded by index.html, found: ${assets.join(', ') || 'none'}`);
}
// Trunk fires TrunkApplicationStarted once the wasm has started.
const script = `<script>addEventListener("TrunkApplicationStarted", () => {
  const prefetch = () => {
    if (!document.querySelector('[data-testid="pay"]')) return;
    drawn.disconnect();
    (window.requestIdleCallback || setTimeout)(() => {
      for (const href of ${JSON.stringify(assets)}) {
        document.head.append(Object.assign(document.createElement("link"), { rel: "prefetch", href, crossOrigin: "anonymous" }));
      }
    });
  };
  const drawn = new MutationObserver(prefetch);
  drawn.observe(document.body, { childList: true, subtree: true });
  prefetch();
});</script>`;
for (const page of pages) {
  const file = path.join(dir, page);
  writeFileSync(file, readFileSync(file, 'utf8').replace('</head>', `${script}</head>`));
}
