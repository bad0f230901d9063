// SPDX-License-Identifier: Apache-2.0
// The "Reference MFU tables" section of BENCHMARKS.md: the reference's CSV tables
// (bench_data/ without aic/) and the blob tools/pack-tables.mjs packs them into (the
// build's build/gen/tables.bin, compiled into the core), raw and gzipped (-9), so
// docs/TABLES.md need not restate sizes that move with the packer and zlib.
// bench/report.mjs includes it; `node bench/reference-tables.mjs --update` rewrites just
// this section of BENCHMARKS.md (after a build, without a full benchmark run).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { replaceSection } from './section.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HEADING = '## Reference MFU tables';
const grouped = (n) => n.toLocaleString('en-US');

/** The CSV files tools/pack-tables.mjs packs, in its order (sorted, aic/ left out). */
function csvFiles(dir, rel = '') {
  return readdirSync(dir).sort().flatMap((name) => {
    const sub = rel ? `${rel}/${name}` : name;
    if (sub === 'aic') return [];
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return csvFiles(file, sub);
    return name.endsWith('.csv') ? [file] : [];
  });
}

export function referenceTablesSection() {
  const blobFile = path.join(root, 'build/gen/tables.bin');
  if (!existsSync(blobFile)) return `${HEADING}\n\nNot measured: no build/gen/tables.bin (run npm run build).`;
  const csv = Buffer.concat(csvFiles(path.join(root, 'bench_data')).map((f) => readFileSync(f)));
  const files = csvFiles(path.join(root, 'bench_data')).length;
  const blob = readFileSync(blobFile);
  const gz = (bytes) => gzipSync(bytes, { level: 9 }).length;
  const rows = [
    [`the ${files} CSV files`, csv.length],
    ['the CSV files, concatenated and gzipped (-9)', gz(csv)],
    ['packed blob (build/gen/tables.bin)', blob.length],
    ['packed blob, gzipped (-9)', gz(blob)],
  ];
  return `${HEADING}

The reference's H100 tables (bench_data/ without aic/, the source of truth) and the
lossless blob tools/pack-tables.mjs packs them into, compiled into the core and the Wasm
module (docs/TABLES.md). The packer keeps, per column, the encoding that compresses best,
so the blob's size can move with zlib as well as with the data.

| form | bytes |
|---|---:|
${rows.map(([what, bytes]) => `| ${what} | ${grouped(bytes)} |`).join('\n')}`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const section = referenceTablesSection();
  if (!process.argv.includes('--update')) {
    process.stdout.write(`${section}\n`);
  } else {
    replaceSection(path.join(root, 'BENCHMARKS.md'), HEADING, section, '## Measured kernel packs');
  }
}
