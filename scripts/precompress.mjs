// Writes .br and .gz next to each text and wasm asset of the built page, at the
// highest levels, so the order server sends them without compressing per request.
// Usage: node scripts/precompress.mjs dist
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const dir = process.argv[2];
for (const name of readdirSync(dir)) {
  if (!/\.(wasm|js|css|html|svg)$/.test(name)) continue;
  const file = path.join(dir, name);
  const bytes = readFileSync(file);
  writeFileSync(`${file}.gz`, gzipSync(bytes, { level: 9 }));
  writeFileSync(
    `${file}.br`,
    brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }),
  );
}
