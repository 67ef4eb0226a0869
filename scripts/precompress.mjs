// Writes .br and .gz next to each text and wasm asset of the built page, at the
// highest levels, so the order server sends them without compressing per request.
// The .gz files come from zopfli (Debian's package, installed by setup.sh): the
// same gzip format every browser reads, about 5 % smaller than zlib's level 9,
// at a cost (a few seconds) paid once per build instead of per request. Every
// file is compressed at once: zopfli in processes of its own, brotli on Node's
// thread pool, so the cores share the work.
// Usage: node scripts/precompress.mjs dist
import { execFile } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants } from 'node:zlib';

const zopfli = (file) => promisify(execFile)('zopfli', ['-c', file], { encoding: 'buffer', maxBuffer: 64 << 20 });
const brotli = promisify(brotliCompress);

async function precompress(file) {
  const bytes = await readFile(file);
  const [gzipped, brotlied] = await Promise.all([
    zopfli(file),
    brotli(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }),
  ]);
  await writeFile(`${file}.gz`, gzipped.stdout);
  await writeFile(`${file}.br`, brotlied);
}

const dir = process.argv[2];
const assets = (await readdir(dir)).filter((name) => /\.(wasm|js|css|html|svg)$/.test(name));
await Promise.all(assets.map((name) => precompress(path.join(dir, name))));
