// SPDX-License-Identifier: Apache-2.0
// The "Measured kernel packs" section of BENCHMARKS.md: every pack's size, raw and
// gzipped, from the build's kernels/index.json (written by tools/pack-kernels.mjs), the
// dense-model budget per GPU and version, and the gzipped CSVs for comparison.
// bench/report.mjs includes it; `node bench/kernel-packs.mjs --update` rewrites just
// this section of BENCHMARKS.md (after a build, without a full benchmark run).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { replaceSection } from './section.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HEADING = '## Measured kernel packs';
const BUDGET = 80 * 1024;
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;

function csvGzip(gpu, version, names) {
  const dir = path.join(root, 'bench_data/aic', gpu.toLowerCase(), version);
  const text = names.filter((n) => existsSync(path.join(dir, `${n}.csv`)))
    .map((n) => readFileSync(path.join(dir, `${n}.csv`)));
  return gzipSync(Buffer.concat(text), { level: 9 }).length;
}

export function kernelPackSection() {
  const indexFile = [path.join(root, 'build/kernels/index.json'),
    path.join(root, 'wasm/dist/kernels/index.json')].find(existsSync);
  if (!indexFile) return `${HEADING}\n\nNot measured: no build/kernels/index.json (run npm run build).`;
  const index = JSON.parse(readFileSync(indexFile, 'utf8'));
  const rows = [];
  const budgetRows = [];
  let total = 0;
  let totalGz = 0;
  for (const [gpu, versions] of Object.entries(index)) {
    for (const [version, parts] of Object.entries(versions)) {
      for (const [part, p] of Object.entries(parts)) {
        rows.push([gpu, version, part, `${p.bytes}`, `${p.gzip_bytes}`]);
        total += p.bytes;
        totalGz += p.gzip_bytes;
      }
      const gz = (name) => parts[name]?.gzip_bytes ?? 0;
      const combos = ['bf16', 'fp8'].flatMap((w) => ['bf16', 'fp8'].map((kv) => [w, kv]))
        .filter(([w, kv]) => parts[`gemm-${w}`] && parts[`attention-${kv}`])
        .map(([w, kv]) =>
          ({ name: `gemm-${w} + attention-${kv} + allreduce`,
          bytes: gz(`gemm-${w}`) + gz(`attention-${kv}`) + gz('allreduce') }));
      const worst = combos.reduce((a, b) => (b.bytes > a.bytes ? b : a));
      const all = Object.values(parts).reduce((s, p) => s + p.gzip_bytes, 0);
      const denseCsv = csvGzip(gpu, version, ['gemm', 'decode_attention', 'prefill_attention', 'allreduce']);
      budgetRows.push([gpu, version, `${worst.name}: ${kb(worst.bytes)}`,
        worst.bytes <= BUDGET ? '**met**' : '**not met**',
        kb(all), kb(denseCsv)]);
    }
  }
  const table = (head, body) => [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`,
    ...body.map((r) => `| ${r.join(' | ')} |`)].join('\n');
  return `${HEADING}

Built by tools/pack-kernels.mjs from bench_data/aic/ (docs/KERNELS.md), loaded at run time,
never part of the Wasm module. Budget: what a dense model needs (one GEMM part, one
attention part, the all-reduce) <= 80 KB gzipped per GPU and version; the largest such
combination is shown. "All parts" is every pack of that GPU and version (bf16 and fp8,
MoE, MLA); "dense CSV" the same tables as gzipped CSV, for comparison.

${table(['GPU', 'tables', 'largest dense-model set, gzipped', 'budget', 'all parts, gzipped', 'dense CSV, gzipped'],
  budgetRows)}

Every pack (bytes; gzip -9):

${table(['GPU', 'tables', 'part', 'raw', 'gzipped'], rows)}

Total: ${rows.length} packs, ${kb(total)} raw, ${kb(totalGz)} gzipped.`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const section = kernelPackSection();
  if (!process.argv.includes('--update')) {
    process.stdout.write(`${section}\n`);
  } else {
    replaceSection(path.join(root, 'BENCHMARKS.md'), HEADING, section, '## What was profiled');
  }
}
