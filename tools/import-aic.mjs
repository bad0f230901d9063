// SPDX-License-Identifier: Apache-2.0
// Imports NVIDIA AIConfigurator's measured vLLM kernel tables (Apache-2.0) into the
// product's source of truth: bench_data/aic/<gpu>/vllm-<version>/*.csv, the GPU
// constants presets/gpus/<gpu>.json, and the data's README, LICENSE and NOTICE.
// Runs by hand when the data changes (not in npm test); re-running it reproduces every
// file byte for byte. What is kept and why: bench_data/aic/README.md (written here).
// Usage: node tools/import-aic.mjs [AIC_DIR]   (default ../shared/aic from the repo root)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { GPUS, TABLES, formatLatencyUs, aicYamlNumbers, readmeText, noticeText } from './aic-tables.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const aicDir = path.resolve(repo, process.argv[2] || '../shared/aic');
const outDir = path.join(repo, 'bench_data', 'aic');
const presetDir = path.join(repo, 'presets', 'gpus');

function fail(msg) {
  console.error(`import-aic: ${msg}`);
  process.exit(1);
}

async function readParquet(file) {
  const buf = fs.readFileSync(file);
  const arrayBuffer = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const rows = await parquetReadObjects({ file: arrayBuffer, compressors });
  // Integers come back as BigInt; every key in these tables fits a double exactly.
  return rows.map((r) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])));
}

// Rows of one table -> sorted CSV text. Rows whose key repeats (re-measurements of the
// same shape) are averaged before rounding; the count is reported in the README.
function toCsv(table, rows, stats) {
  const groups = new Map();
  for (const row of rows) {
    const key = table.columns.map((c) => row[c]);
    if (key.some((v) => v === undefined || v === null || (typeof v === 'number' && !Number.isFinite(v)))) {
      fail(`${table.file}: a row lacks a key column: ${JSON.stringify(row)}`);
    }
    if (!(row.latency > 0 && Number.isFinite(row.latency))) fail(`${table.file}: bad latency ${row.latency}`);
    const k = key.join(',');
    const rank = table.prefer ? table.prefer.indexOf(row.kernel) + 1 || table.prefer.length + 1
      : table.rank ? table.rank(row.kernel) : 0;
    const g = groups.get(k);
    if (!g) groups.set(k, { key, rank, latencies: [row.latency] });
    else if (rank < g.rank) Object.assign(g, { rank, latencies: [row.latency] }, { replaced: true });
    else if (rank === g.rank) g.latencies.push(row.latency);
    else g.replaced = true;
  }
  const list = [...groups.values()];
  stats.otherKernel = list.filter((g) => g.replaced).length;
  const compare = (a, b) => {
    for (let i = 0; i < a.key.length; i += 1) {
      const x = a.key[i];
      const y = b.key[i];
      if (x === y) continue;
      if (typeof x === 'number') return x - y;
      return x < y ? -1 : 1;
    }
    return 0;
  };
  list.sort(compare);
  stats.repeated = list.filter((g) => g.latencies.length > 1).length;
  stats.rows = list.length;
  const lines = [[...table.columns, 'latency_us'].join(',')];
  for (const g of list) {
    const ms = g.latencies.reduce((a, b) => a + b, 0) / g.latencies.length;
    lines.push([...g.key, formatLatencyUs(ms * 1000)].join(','));
  }
  return `${lines.join('\n')}\n`;
}

function writeIfChanged(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== text) fs.writeFileSync(file, text);
}

const commit = fs.readFileSync(path.join(aicDir, 'COMMIT'), 'utf8').trim();
if (!/^[0-9a-f]{40}$/.test(commit)) fail(`${aicDir}/COMMIT is not a commit hash`);
const report = []; // per GPU/version/table: rows kept, source rows, repeats

for (const gpu of GPUS) {
  const yaml = fs.readFileSync(path.join(aicDir, 'systems', `${gpu.aic}.yaml`), 'utf8');
  let device = '';
  for (const version of gpu.versions) {
    for (const table of TABLES) {
      const srcVersion = (table.op === 'comm' && gpu.commVersion?.[version]) ||
        (table.op === 'kda' && gpu.kdaVersion?.[version]) || version;
      const dir = path.join(aicDir, 'data', gpu.aic, table.op, 'vllm', srcVersion);
      const sources = table.sources.map((s) => path.join(dir, `${s}.parquet`)).filter((f) => fs.existsSync(f));
      if (sources.length === 0) {
        if (table.optional) continue;
        fail(`${gpu.name} ${version}: no ${table.sources.join('/')} in ${dir}`);
      }
      let all = [];
      for (const f of sources) all = all.concat(await readParquet(f));
      device ||= all[0]?.device || '';
      const kept = all.map((r) => /** @type {(r: any, g: any) => any} */ (table.map)(r, gpu)).filter(Boolean);
      const stats = { source: all.length };
      const csv = toCsv(table, kept, stats);
      const entry = { gpu: gpu.name, version, table: table.file, srcVersion, source: all.length };
      if (stats.rows === 0) {
        report.push({ ...entry, rows: 0, repeated: 0, note: table.emptyNote });
        continue;
      }
      writeIfChanged(path.join(outDir, gpu.dir, `vllm-${version}`, `${table.file}.csv`), csv);
      report.push({ ...entry, rows: stats.rows, repeated: stats.repeated, otherKernel: stats.otherKernel });
    }
  }
  const n = aicYamlNumbers(yaml);
  const spec = {
    name: gpu.name,
    device,
    memory_bytes: n['gpu.mem_capacity'],
    hbm_bw_bytes_per_s: n['gpu.mem_bw'],
    bf16_tflops: n['gpu.bfloat16_tc_flops'] / 1e12,
    fp8_tflops: (n['gpu.fp8_tc_flops'] || 0) / 1e12,
    int8_tflops: (n['gpu.int8_tc_flops'] || 0) / 1e12,
    nvlink_bw_bytes_per_s: n['node.intra_node_bw'],
    pcie_bw_bytes_per_s: n['node.pcie_bw'],
    interconnect: gpu.interconnect,
    aic_system: gpu.aic,
    mem_bw_empirical_scaling: n['gpu.mem_bw_empirical_scaling_factor'],
    mem_empirical_latency_s: n['gpu.mem_empirical_constant_latency'],
    p2p_latency_s: n['node.p2p_latency'],
    other_mem_bytes: n['misc.other_mem'],
    inter_node_bw_bytes_per_s: n['node.inter_node_bw'],
    gpus_per_node: n['node.num_gpus_per_node'],
    nccl_mem_bytes: [1, 2, 4, 8].map((tp) => n[`misc.nccl_mem.${tp}`]),
    power_w: n['gpu.power'],
    sm_version: n['gpu.sm_version'] ?? 0,  // 0: not an NVIDIA GPU (Intel's B60 has no SM version)
    kernels: gpu.versions.map((v) => `vllm-${v}`),
    default_kernels: `vllm-${gpu.defaultVersion}`,
    source: `NVIDIA AIConfigurator (github.com/ai-dynamo/aiconfigurator) commit ${commit.slice(0, 12)}, ` +
      `aic-core/src/aiconfigurator_core/systems/${gpu.aic}.yaml, Apache-2.0; device name from its measured tables`,
  };
  for (const [k, v] of Object.entries(spec)) {
    if (v === undefined ||
      (Array.isArray(v) && v.some((x) => x === undefined))) fail(`${gpu.aic}.yaml: no value for ${k}`);
  }
  writeIfChanged(path.join(presetDir, `${gpu.dir}.json`), `${JSON.stringify(spec, null, 2)}\n`);
}

writeIfChanged(path.join(outDir, 'README.md'), readmeText(commit, report, GPUS));
writeIfChanged(path.join(outDir, 'LICENSE'), fs.readFileSync(path.join(aicDir, 'LICENSE'), 'utf8'));
writeIfChanged(path.join(outDir, 'NOTICE'), noticeText(commit));
for (const r of report) console.log(`${r.gpu} vllm-${r.version} ${r.table}: ${r.rows} rows (of ${r.source})`);
