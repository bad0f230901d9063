// SPDX-License-Identifier: Apache-2.0
// Packs the measured kernel database (bench_data/aic/<gpu>/vllm-<version>/*.csv) into
// one small binary per GPU, version and part, losslessly (format: docs/KERNELS.md).
// Run by CMake at build time. Writes into every OUT_DIR:
//   <gpu>-vllm-<version>-<part>.bin   e.g. h100-vllm-0.14.0-gemm-bf16.bin
//   index.json                        {gpu: {version: {part: {file, bytes, gzip_bytes}}}}
// and, with --catalogue FILE.cpp, the coverage summary compiled into the core.
// Usage: node tools/pack-kernels.mjs AIC_DIR [--catalogue OUT.cpp] OUT_DIR...
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { encodePackTable, PACK_MAGIC, withChecksum, Writer } from './kernel-pack-format.mjs';

const args = process.argv.slice(2);
const aicDir = args.shift();
let catalogueFile = '';
if (args[0] === '--catalogue') {
  args.shift();
  catalogueFile = args.shift();
}
const outDirs = args;
if (!aicDir || outDirs.length === 0) {
  console.error('usage: node tools/pack-kernels.mjs AIC_DIR [--catalogue OUT.cpp] OUT_DIR...');
  process.exit(2);
}
const fail = (msg) => {
  console.error(`pack-kernels: ${msg}`);
  process.exit(1);
};

// Table kinds, as KernelTable in core/kernels/kernel_db.h; dtype ids as KernelDtype.
const KIND = { gemm: 0, decode_attention: 1, prefill_attention: 2, allreduce: 3, moe: 4, mla_prefill: 5,
  mla_decode: 6, gdn_conv_decode: 7, gdn_decode: 8, gdn_conv_prefill: 9, gdn_prefill: 10,
  dsa_prefill: 11, dsa_decode: 12, kda_decode: 13, kda_prefill: 14 };
const DTYPE = { bf16: 0, fp8: 1, fp8_block: 2, nvfp4: 3, mxfp4: 4, int4: 5 };
// Parts: what one file holds. A dense model needs one GEMM part, one attention part
// and (TP > 1) the all-reduce; MoE and MLA models add theirs. `moe` holds the bf16 and
// fp8 experts (an FP8 lookup is checked against BF16); the other expert formats have a
// part each, fetched only by the models that run them.
const PARTS = [
  { name: 'gemm-bf16', tables: ['gemm'], dtypes: ['bf16'] },
  { name: 'gemm-fp8', tables: ['gemm'], dtypes: ['fp8'] },
  { name: 'gemm-fp8_block', tables: ['gemm'], dtypes: ['fp8_block'] },
  { name: 'gemm-nvfp4', tables: ['gemm'], dtypes: ['nvfp4'] },
  { name: 'attention-bf16', tables: ['decode_attention', 'prefill_attention'], dtypes: ['bf16'] },
  { name: 'attention-fp8', tables: ['decode_attention', 'prefill_attention'], dtypes: ['fp8'] },
  { name: 'allreduce', tables: ['allreduce'] },
  { name: 'moe', tables: ['moe'], dtypes: ['bf16', 'fp8'] },
  { name: 'moe-fp8_block', tables: ['moe'], dtypes: ['fp8_block'] },
  { name: 'moe-nvfp4', tables: ['moe'], dtypes: ['nvfp4'] },
  { name: 'moe-mxfp4', tables: ['moe'], dtypes: ['mxfp4'] },
  { name: 'moe-int4', tables: ['moe'], dtypes: ['int4'] },
  { name: 'mla', tables: ['mla_prefill', 'mla_decode'] },
  // Gated DeltaNet (linear attention): fetched only by a model with linear-attention layers.
  { name: 'gdn', tables: ['gdn_conv_decode', 'gdn_decode', 'gdn_conv_prefill', 'gdn_prefill'] },
  // DeepSeek sparse attention modules: fetched only by a model with an indexer (DeepSeek-V3.2).
  { name: 'dsa', tables: ['dsa_prefill', 'dsa_decode'] },
  // Kimi delta attention: fetched only by a model with KDA layers (Kimi-Linear).
  { name: 'kda', tables: ['kda_decode', 'kda_prefill'] },
];

function readCsv(file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0);
  const header = lines[0].split(',');
  if (header[header.length - 1] !== 'latency_us') fail(`${file}: the last column must be latency_us`);
  return { header, rows: lines.slice(1).map((l) => l.split(',')) };
}

const gpuNames = Object.fromEntries(
  fs.readdirSync(path.join(aicDir, '..', '..', 'presets', 'gpus')).filter((f) => f.endsWith('.json')).map((f) => {
    const g = JSON.parse(fs.readFileSync(path.join(aicDir, '..', '..', 'presets', 'gpus', f), 'utf8'));
    return [f.replace(/\.json$/, ''), g.name];
  }));

const index = {};
const catalogue = [];
const outputs = new Map();
for (const dir of fs.readdirSync(aicDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name)
  .sort()) {
  const gpu = gpuNames[dir];
  if (!gpu) fail(`bench_data/aic/${dir}: no presets/gpus/${dir}.json`);
  for (const version of fs.readdirSync(path.join(aicDir, dir)).filter((v) => v.startsWith('vllm-')).sort()) {
    const folder = path.join(aicDir, dir, version);
    const csv = {};
    for (const f of fs.readdirSync(folder)
      .filter((f) => f.endsWith('.csv'))) csv[f.replace(/\.csv$/, '')] = readCsv(path.join(folder, f));
    const coverage = { parts: [], head_dims: new Set(), gemm: new Set(), kv: new Set(), tps: new Set(), moe: new Map(),
      moeDtypes: new Set(), mla: false, gdn: false, dsa: false, kda: false };
    for (const part of PARTS) {
      const tables = [];
      for (const name of part.tables) {
        const t = csv[name];
        if (!t) continue;
        const hasDtype = t.header[0] === 'dtype' || t.header[0] === 'kv_dtype';
        const dtypes = hasDtype ? [...new Set(t.rows.map((r) => r[0]))] : ['bf16'];
        for (const dtype of dtypes) {
          if (part.dtypes && !part.dtypes.includes(dtype)) continue;
          if (!(dtype in DTYPE)) fail(`${folder}/${name}.csv: unknown dtype ${dtype}`);
          const first = hasDtype ? t.rows.findIndex((r) => r[0] === dtype) : 0;
          const rows = hasDtype ? t.rows.filter((r) => r[0] === dtype) : t.rows;
          if (hasDtype &&
            t.rows[first + rows.length - 1]?.[0] !== dtype) fail(`${folder}/${name}.csv: ${dtype} rows not contiguous`);
          const keys = t.header.slice(hasDtype ? 1 : 0, -1);
          const keyRows = rows.map((r) => r.slice(hasDtype ? 1 : 0, -1).map(Number));
          const latencies = rows.map((r) => r[r.length - 1]);
          tables.push({ kind: KIND[name], dtype: DTYPE[dtype], csv: name, firstRow: first, keys, keyRows, latencies });
          if (name === 'gemm') coverage.gemm.add(dtype);
          if (name.endsWith('_attention')) {
            coverage.kv.add(dtype);
            keyRows.forEach((k) => coverage.head_dims.add(k[0]));
          }
          if (name === 'allreduce') keyRows.forEach((k) => coverage.tps.add(k[0]));
          if (name === 'moe') coverage.moeDtypes.add(dtype);
          if (name === 'moe') {
            keyRows.forEach((k) => coverage.moe.set([dtype, ...k.slice(0, 4)].join(','), [dtype, ...k.slice(0, 4)]));
          }
          if (name.startsWith('mla')) coverage.mla = true;
          if (name.startsWith('gdn')) coverage.gdn = true;
          if (name.startsWith('dsa')) coverage.dsa = true;
          if (name.startsWith('kda')) coverage.kda = true;
        }
      }
      if (tables.length === 0) continue;
      const w = new Writer();
      w.raw(PACK_MAGIC);
      w.text(gpu);
      w.text(version);
      w.text(part.name);
      w.varint(tables.length);
      for (const t of tables) {
        try {
          encodePackTable(w, t);
        } catch (e) {
          fail(`${folder}/${t.csv}.csv: ${e.message}`);
        }
      }
      const bytes = withChecksum(w.bytes);
      const file = `${dir}-${version}-${part.name}.bin`;
      const gz = zlib.gzipSync(bytes, { level: 9 }).length;
      outputs.set(file, bytes);
      ((index[gpu] ||= {})[version] ||= {})[part.name] = { file, bytes: bytes.length, gzip_bytes: gz };
      coverage.parts.push({ name: part.name, bytes: bytes.length, gz });
    }
    const preset = JSON.parse(fs.readFileSync(path.join(aicDir, '..', '..', 'presets', 'gpus', `${dir}.json`), 'utf8'));
    catalogue.push({ gpu, version, coverage, isDefault: preset.default_kernels === version });
  }
}

const writeIfChanged = (file, data) => {
  if (fs.existsSync(file) && Buffer.compare(fs.readFileSync(file), Buffer.from(data)) === 0) return;
  fs.writeFileSync(file, data);
};
for (const dir of outDirs) {
  fs.mkdirSync(dir, { recursive: true });
  for (const [file, bytes] of outputs) writeIfChanged(path.join(dir, file), bytes);
  writeIfChanged(path.join(dir, 'index.json'), `${JSON.stringify(index, null, 1)}\n`);
}
if (catalogueFile) {
  const { catalogueCpp } = await import('./kernel-catalogue.mjs');
  fs.mkdirSync(path.dirname(catalogueFile), { recursive: true });
  writeIfChanged(catalogueFile, catalogueCpp(catalogue));
}
