// Makes the landing cart (cart.html) prefetch the whole app's JS and wasm. The
// page the PG window sends the customer back to (/pay/success) is the whole app,
// so it then starts from the browser's cache instead of a cold download right
// when the payment is being confirmed. The prefetch starts only once the cart
// is running and the browser is idle, so it never slows the cart's own load.
// Usage: node scripts/prefetch-app.mjs dist
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const dir = process.argv[2];
const index = readFileSync(path.join(dir, 'index.html'), 'utf8');
const assets = [...index.matchAll(/<link rel="(?:modulepreload|preload)" href="([^"]+)"/g)].map((match) => match[1]);
if (assets.length !== 2) {
  throw new Error(`expected the whole app's JS and wasm preloaded by index.html, found: ${assets.join(', ') || 'none'}`);
}
const cartFile = path.join(dir, 'cart.html');
const cart = readFileSync(cartFile, 'utf8');
// Trunk fires TrunkApplicationStarted once the wasm has started.
const script = `<script>addEventListener("TrunkApplicationStarted", () => (window.requestIdleCallback || setTimeout)(() => {
  for (const href of ${JSON.stringify(assets)}) {
    const link = document.createElement("link");
    Object.assign(link, { rel: "prefetch", href, crossOrigin: "anonymous" });
    document.head.append(link);
  }
}));</script>`;
writeFileSync(cartFile, cart.replace('</head>', `${script}</head>`));
