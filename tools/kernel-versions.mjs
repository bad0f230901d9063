// SPDX-License-Identifier: Apache-2.0
// The evidence behind each GPU's default kernel tables (docs/KERNELS.md, "Default
// tables"; issue 22): every measured run of the accuracy ledger (data/silicon/) on a GPU
// that ships several table versions is priced under each version, with the ledger's own
// protocol (tools/validate-ledger.mjs), and the errors compared over the runs every version
// prices. To keep it minutes, not an hour: up to PER_GPU runs per GPU, taken round-robin over
// the ledger's subsets, the cheapest first (as the ledger's npm-test spread is taken).
// Writes docs/kernel-versions.json; docs/KERNELS.md renders it (npm run docs). Run by hand
// when the tables or the estimates change.
// Usage: node tools/kernel-versions.mjs
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, readRows, requestOf, run, serve, overall, subsetOf } from './validate-ledger.mjs';

const PER_GPU = 400;  // more than any GPU's runs today: every run

/** Up to PER_GPU items, round-robin over subsets, the cheapest (fewest simulated tokens) first. */
function spread(/** @type {{row: any, mapped: any}[]} */ items) {
  const cost = (/** @type {any} */ x) => {
    const w = x.mapped.request.workload;
    return w.num_requests * (w.input_tokens + w.output_tokens);
  };
  /** @type {Map<string, any[]>} */
  const by = new Map();
  for (const x of items) by.set(subsetOf(x.row), [...(by.get(subsetOf(x.row)) ?? []), x]);
  const queues = [...by.keys()].sort().map((k) => (by.get(k) ?? []).sort((a, b) => cost(a) - cost(b) ||
    (a.row.id < b.row.id ? -1 : 1)));
  const out = [];
  for (let round = 0; out.length < PER_GPU && queues.some((q) => q.length > round); ++round)
    for (const q of queues) if (q.length > round && out.length < PER_GPU) out.push(q[round]);
  return out;
}

const OUT = 'docs/kernel-versions.json';
const GPU_OF = /** @type {Record<string, string>} */ ({ h100_sxm: 'H100', h200_sxm: 'H200', b200_sxm: 'B200' });

const catalogue = JSON.parse(run(['catalogue'], '').stdout);
const rows = readRows();
const gpus = [];
for (const spec of catalogue.gpu_specs) {
  if (spec.kernels.length < 2) continue;
  const mine = spread(rows.filter((r) => GPU_OF[r.system] === spec.name).map((row) => ({ row, mapped: requestOf(row) }))
    .filter((x) => 'request' in x.mapped));
  /** @type {Record<string, Map<string, {ttft: number, tpot: number}>>} */
  const byVersion = {};
  for (const version of spec.kernels) {
    const results = new Map();
    for (let i = 0; i < mine.length; i += 16) {
      const part = mine.slice(i, i + 16);
      serve(part.map((x) => ({ .../** @type {any} */ (x.mapped).request, kernels: version }))).forEach((r, j) => {
        if (!r.error) results.set(part[j].row.id, { ttft: r.ttft_ms.mean, tpot: r.tpot_ms.mean });
      });
    }
    byVersion[version] = results;
    console.error(`kernel-versions: ${spec.name} ${version}: ${results.size} of ${mine.length} runs priced`);
  }
  const common = mine.filter((x) => spec.kernels.every((v) => byVersion[v].has(x.row.id)));
  gpus.push({
    gpu: spec.name, default: spec.default_kernels, runs: mine.length, common: common.length, per_gpu: PER_GPU,
    versions: spec.kernels.map((/** @type {string} */ version) => {
      const priced = byVersion[version];
      const runs = common.map((x) => ({
        status: 'priced', ttft_ms: priced.get(x.row.id)?.ttft, tpot_ms: priced.get(x.row.id)?.tpot,
        silicon_ttft_ms: Number(x.row.silicon_ttft_ms), silicon_tpot_ms: Number(x.row.silicon_tpot_ms),
      }));
      const o = overall(/** @type {any} */ (runs));
      return { version, priced: priced.size, ttft_mape: o.ttft_mape, tpot_mape: o.tpot_mape };
    }),
  });
}
writeFileSync(join(ROOT, OUT), `${JSON.stringify({ generated_by: 'tools/kernel-versions.mjs', gpus }, null, 1)}\n`);
console.error(`kernel-versions: wrote ${OUT}`);
