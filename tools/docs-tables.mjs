// SPDX-License-Identifier: Apache-2.0
// Generators of tools/docs-blocks.mjs for tables and counts read from the catalogue, from
// results of the CLI and from the repository's data: the corrected mode's parameters, the
// GPUs and their measured kernel tables, the measured mode's figures from those tables,
// the size of the CSV sources of truth, and the bad-input contract (tests/data/bad-inputs.json).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { code, dataLines, int, table } from './docs-context.mjs';

/** @typedef {import('./docs-context.mjs').DocsContext} DocsContext */

/**
 * The CSV files under `dir`, recursively, sorted; `skip` names top-level folders left out.
 * @param {string} dir
 * @param {string[]} [skip]
 * @returns {string[]}
 */
function csvFiles(dir, skip = []) {
  return readdirSync(dir).sort().filter((name) => !skip.includes(name)).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return csvFiles(file);
    return name.endsWith('.csv') ? [file] : [];
  });
}

/** Files, data rows and bytes of `files`. @param {string[]} files */
function csvSize(files) {
  const texts = files.map((f) => readFileSync(f));
  return { files: files.length, rows: texts.reduce((s, t) => s + dataLines(t.toString('utf8')).length, 0),
    bytes: texts.reduce((s, t) => s + t.length, 0) };
}

/** A table cell: its text with `|` escaped. @param {string} text */
const cell = (text) => text.replace(/\|/g, '\\|');

/** @type {Record<string, (ctx: DocsContext) => string>} */
export const tables = {
  /** The corrected mode's parameters, from the catalogue. */
  'corrected-params': (ctx) => table(['name', 'default', 'unit', 'accepted', 'what it is'],
    ctx.catalogue().corrected.params.map((/** @type {any} */ p) =>
      [code(p.name), p.default, p.unit, `${p.min} .. ${int(p.max)}`, cell(p.description)]),
    [false, true]),

  /** Every GPU with its device name and measured kernel tables, from the catalogue. */
  'kernel-gpus': (ctx) => table(['GPU', 'device (as measured)', 'vLLM tables', 'default'],
    ctx.catalogue().gpu_specs.map((/** @type {any} */ g) =>
      [g.name, g.device, g.kernels.join(', '), g.default_kernels])),

  /** The measured mode's constants from each GPU's tables, read from real results. */
  'measured-table-figures': (ctx) => {
    const c = ctx.catalogue();
    const model = 'llama-3.1-8b-instruct';
    const rows = c.kernels.map((/** @type {any} */ k) => {
      const r = ctx.price({ model, gpu: k.gpu, kernels: k.version, mode: 'measured', step: {
        decode_requests: [{ progress_index: 100 }] } });
      const f = r.measured.constants;
      const spec = c.gpu_specs.find((/** @type {any} */ g) => g.name === k.gpu);
      return [k.gpu, k.version, (spec.hbm_bw_bytes_per_s / 1e12).toFixed(2), (f.hbm_bytes_per_s / 1e12).toFixed(2),
        f.launch_floor_us.toFixed(2), f.decode_fixed_us.toFixed(1), f.prefill_fixed_us.toFixed(1)];
    }).sort((/** @type {string[]} */ a, /** @type {string[]} */ b) => (a[0] + a[1] < b[0] + b[1] ? -1 : 1));
    return `From \`measured.constants\` of a result (${code(model)}, TP 1; the attention fixed costs depend ` +
      `on the model's heads):\n\n${table(['GPU', 'kernels', 'datasheet HBM TB/s', 'effective TB/s',
      'launch floor us', 'decode fixed us', 'prefill fixed us'], rows, [false, false, true, true, true, true, true])}`;
  },

  /** The reference's CSV tables (bench_data/ without aic/): rows, files and bytes. */
  'reference-tables-csv': (ctx) => {
    const s = csvSize(csvFiles(path.join(ctx.root, 'bench_data'), ['aic']));
    return `${int(s.rows)} measured rows in ${int(s.files)} files, ${int(s.bytes)} bytes`;
  },

  /** Data rows of the measured kernel database's CSV files (bench_data/aic/). */
  'aic-csv-rows': (ctx) => int(csvSize(csvFiles(path.join(ctx.root, 'bench_data/aic'))).rows),

  /** NCCL's memory reserve per GPU at TP 1, 2, 4 and 8 (presets/gpus/, through the catalogue). */
  'nccl-reserves': (ctx) => {
    /** @type {Map<string, string[]>} */
    const groups = new Map();
    for (const g of ctx.catalogue().gpu_specs) {
      const mib = g.nccl_mem_bytes.map((/** @type {number} */ b) => int(b / 2 ** 20)).join(' / ');
      groups.set(mib, [...(groups.get(mib) ?? []), g.name]);
    }
    const each = [...groups].map(([mib, gpus]) => `${mib} MiB${groups.size > 1 ? ` (${gpus.join(', ')})` : ''}`);
    return `${each.join('; ')} at TP 1 / 2 / 4 / 8`;
  },

  /** Every entry of tests/data/bad-inputs.json: the error (or "priced") it must give, where. */
  'bad-inputs': (ctx) => table(['Input', 'Error', 'Path', 'Layers'],
    ctx.readJson('tests/data/bad-inputs.json').entries.map((/** @type {any} */ e) => [
      cell(e.name),
      e.code ? code(e.code) : e.warning ? `priced + ${code(e.warning)}` : 'priced',
      !e.code ? '' : e.path === '' ? '(document)' : code(cell(e.path)),
      e.layers ? e.layers.join(', ') : 'all',
    ])),
};
