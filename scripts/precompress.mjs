// Writes .br and .gz next to each text and wasm asset of the built page, at the
// highest levels, so the order server sends them without compressing per request.
// The .gz files come from zopfli (Debian's package, installed by setup.sh): the
// same gzip format every browser reads, about 5 % smaller than zlib's level 9,
// at a cost (a few seconds) paid once per build instead of per request.
// Usage: node scripts/precompress.mjs dist
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants } from 'node:zlib';

const dir = process.argv[2];
for (const name of readdirSync(dir)) {
  if (!/\.(wasm|js|css|html|svg)$/.test(name)) continue;
  const file = path.join(dir, name);
  const bytes = readFileSync(file);
  writeFileSync(`${file}.gz`, execFileSync('zopfli', ['-c', file], { maxBuffer: 64 << 20 }));
  writeFileSync(
    `${file}.br`,
    brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }),
  );
}
