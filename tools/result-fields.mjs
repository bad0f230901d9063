// SPDX-License-Identifier: Apache-2.0
// The result contract as data: every field path real results have, with its JSON types
// and the modes it appears in. Results come from the CLI: `price` of every public
// conformance case (tests/data/conformance-cases.json) and of one mixed step of every model
// preset (MoE, MLA and FP8 models included) at full and summary detail in every mode, and
// `serve` of a few workloads in every mode. The blocks `result-fields`
// (docs/RESULT.md) and `serve-fields` (docs/SERVING.md) list them, so a field added or
// removed fails `npm test` until the document is regenerated.
import { code, int, list, table } from './docs-context.mjs';

/** @typedef {import('./docs-context.mjs').DocsContext} DocsContext */

const CASES = 'tests/data/conformance-cases.json';
const TYPE_ORDER = ['object', 'array', 'string', 'number', 'boolean', 'null'];

/**
 * A tree of field paths in the order they first appear; `a[]` is every element of `a`.
 * @typedef {{types: Set<string>, modes: Set<string>, children: Map<string, FieldNode>}} FieldNode
 */
const node = () => /** @type {FieldNode} */ ({ types: new Set(), modes: new Set(), children: new Map() });

/**
 * Adds the fields of `value` (one result) under `at`.
 * @param {FieldNode} at
 * @param {unknown} value
 * @param {string} mode
 */
function add(at, value, mode) {
  const entries = Array.isArray(value) ? value.map((v) => ['[]', v])
    : value !== null && typeof value === 'object' ? Object.entries(value).map(([k, v]) => [`.${k}`, v]) : [];
  for (const [key, v] of entries) {
    let child = at.children.get(key);
    if (!child) at.children.set(key, child = node());
    child.types.add(v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
    child.modes.add(mode);
    add(child, v, mode);
  }
}

/**
 * Every path of the tree, depth first: [path, types, modes].
 * @param {FieldNode} tree
 * @returns {[string, string[], string[]][]}
 */
export function fieldPaths(tree, prefix = '') {
  return [...tree.children].flatMap(([key, child]) => {
    const p = prefix ? prefix + key : key.replace(/^\./, '');
    const types = TYPE_ORDER.filter((t) => child.types.has(t));
    return [[p, types, [...child.modes]], ...fieldPaths(child, p)];
  });
}

/** One mixed step of every preset model, at TP 2 (so the all-reduces are priced). @param {DocsContext} ctx */
const presetSteps = (ctx) => ctx.presets().models.map((/** @type {any} */ m) => ({ model: m.name, tp: 2, step: {
  prefill_requests: [{ progress_index: 256, num_new_prefill_tokens: 512 }],
  decode_requests: [{ progress_index: 1000 }] } }));

/**
 * The fields of `price` results over the conformance cases and the preset steps in every
 * mode, at `detail`; `results` counts them (a request a mode refuses gives none).
 * @param {DocsContext} ctx
 * @param {'full' | 'summary'} detail
 */
export function priceFields(ctx, detail) {
  const tree = node();
  let results = 0;
  const presets = JSON.stringify(presetSteps(ctx));
  for (const { name: mode } of ctx.catalogue().modes) {
    const flags = ['--mode', mode, ...(detail === 'summary' ? ['--detail', 'summary'] : [])];
    for (const r of [...ctx.json(['price', ...flags, CASES]), ...ctx.json(['price', ...flags, '-'], presets)]) {
      if (r.error) continue;
      add(tree, r, mode);
      results++;
    }
  }
  return { tree, results };
}

/** Workloads `serve` is run on: closed and open loop, fixed and drawn lengths, with a price. */
const SERVE_REQUESTS = [
  { model: 'llama-3.1-8b-instruct', gpu_hour_usd: 2.5,
    workload: { input_tokens: 512, output_tokens: 32, concurrency: 4, num_requests: 16 } },
  { model: 'qwen3-30b-a3b', tp: 2, workload: { input_tokens: { distribution: 'uniform', min: 64, max: 1024 },
    output_tokens: { distribution: 'exponential', mean: 24, max: 64 }, request_rate: 8, num_requests: 16,
    prefix_cache_hit_ratio: 0.25 } },
];

/** The fields of `serve` results over SERVE_REQUESTS in every mode. @param {DocsContext} ctx */
export function serveFields(ctx) {
  const tree = node();
  let results = 0;
  for (const { name: mode } of ctx.catalogue().modes) {
    for (const request of SERVE_REQUESTS) {
      const r = ctx.json(['serve', '--mode', mode, '-'], request);
      if (r.error) throw new Error(`serve ${request.model} in ${mode}: ${r.error.path}: ${r.error.message}`);
      add(tree, r, mode);
      results++;
    }
  }
  return { tree, results };
}

/**
 * The table of a field tree; modes are "all" when a field is in every mode.
 * @param {FieldNode} tree
 * @param {string[]} modes
 */
function fieldTable(tree, modes) {
  return table(['field', 'JSON type', 'modes'], fieldPaths(tree).map(([p, types, seen]) =>
    [code(p), types.join(', '), seen.length === modes.length ? 'all' : seen.join(', ')]));
}

/** @type {Record<string, (ctx: DocsContext) => string>} */
export const resultFieldBlocks = {
  'result-fields': (ctx) => {
    const modes = ctx.catalogue().modes.map((/** @type {any} */ m) => m.name);
    const full = priceFields(ctx, 'full');
    const summary = priceFields(ctx, 'summary');
    const cases = ctx.readJson(CASES).length;
    return `Every field path of \`stepcalc price\` results in each mode for the ${int(cases)} public conformance ` +
      `cases (\`${CASES}\`) and one mixed step of each of the ${int(presetSteps(ctx).length)} model presets at ` +
      `TP 2: ${int(full.results)} results at full detail, ${int(summary.results)} at summary detail (a request a ` +
      `mode refuses gives none). \`a[]\` is every element of the array \`a\`; "all" is ` +
      `every mode (${list(modes.map(code))}). A field that may be absent (\`id\`, \`phases.prefill\`, ...) is ` +
      `listed where some result has it.\n\n**Full detail**\n\n${fieldTable(full.tree, modes)}\n\n` +
      `**Summary detail**\n\n${fieldTable(summary.tree, modes)}`;
  },

  'serve-fields': (ctx) => {
    const modes = ctx.catalogue().modes.map((/** @type {any} */ m) => m.name);
    const serve = serveFields(ctx);
    return `Every field path of \`stepcalc serve\` results: ${int(serve.results)} runs (a closed loop with a ` +
      `GPU-hour price, and an open loop with drawn lengths and a prefix-cache hit, in each mode). \`a[]\` is every ` +
      `element of the array \`a\`; "all" is every mode (${list(modes.map(code))}).\n\n${fieldTable(serve.tree, modes)}`;
  },
};
