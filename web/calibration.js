// SPDX-License-Identifier: Apache-2.0
// Measured steps -> stepcalc requests, and the fit of the corrected mode's two CPU
// parameters to them. Shared by the page (calibrate-panel.js) and tools/accuracy.mjs,
// so there is one reconstruction of a step. No DOM, no dependencies; the caller prices.
// Columns: data/calibration/README.md.

/** Model column -> preset name (other values are taken as preset names as they are). */
export const MODEL_PRESETS = { 'llama-2-70b': 'llama-2-70b-hf', 'llama-2-7b': 'llama-2-7b-hf' };
/** The number predicted. */
export const TARGET = 'cycle_us_to_next_step_start';
/** Columns rebuildStep reads (plus `model`), all numeric. */
export const NUMERIC_COLUMNS = ['tp', 'batch.prefill_tokens', 'batch.num_prefill_reqs', 'batch.num_decode_reqs',
  'queue.running_depth', 'kv.usage_gpu_ratio', 'kv.blocks_total_gpu', TARGET];
export const MAX_ROWS = 20000;
/** The two parameters fitted; every other one is a public figure (docs/CORRECTED-MODE.md). */
export const CPU_ZERO = { cpu_step_us: 0, cpu_per_request_us: 0 };

const splitLine = (line) => line.split(',').map((c) => c.trim().replace(/^"(.*)"$/, '$1'));

/** Columns holding request counts: each row becomes that many requests. */
const COUNT_COLUMNS = ['batch.num_prefill_reqs', 'batch.num_decode_reqs'];

/**
 * Why a row's request counts cannot be rebuilt: not whole numbers >= 0, or more
 * requests in one step than `maxRequests` (the core's limit). Null when they can.
 */
function countProblem(row, maxRequests) {
  for (const c of COUNT_COLUMNS) {
    const v = Number(row[c]);
    if (!Number.isInteger(v) || v < 0) return [c, `"${row[c].slice(0, 40)}" is not a whole number of requests.`];
  }
  const total = COUNT_COLUMNS.reduce((sum, c) => sum + Number(row[c]), 0);
  if (maxRequests !== undefined && total > maxRequests) {
    const big = COUNT_COLUMNS.reduce((a, b) => (Number(row[a]) >= Number(row[b]) ? a : b));
    return [big, `${total} requests in one step; a step holds at most ${maxRequests} (prefill + decode).`];
  }
  return null;
}

/**
 * CSV text -> {rows, lines, errors}: rows are {column: text} objects, lines their
 * 1-based line numbers in the file. Errors name the line and column; a file with any
 * error yields no rows only when the header itself is unusable, else the bad rows are
 * left out and listed. `maxRequestsPerStep` bounds each row's requests (prefill +
 * decode) and `maxRequestsInFile` all of them, so no line expands beyond what is priced.
 */
/** @param {string} text @param {{maxRequestsPerStep?: number, maxRequestsInFile?: number}} [limits] */
export function parseStepsCsv(text, { maxRequestsPerStep, maxRequestsInFile } = {}) {
  const all = String(text).replace(/^\uFEFF/, '').split(/\r?\n/);
  const numbered = all.map((line, i) => /** @type {[number, string]} */ ([i + 1, line]))
    .filter(([, line]) => line.trim() !== '');
  if (!numbered.length) return { rows: [], lines: [],
    errors: ['The file is empty: expected a header line and one line per step.'] };
  const [headerLine, headerText] = numbered[0];
  const header = splitLine(headerText);
  const missing = ['model', ...NUMERIC_COLUMNS].filter((c) => !header.includes(c));
  if (missing.length) {
    return { rows: [], lines: [],
      errors: [`line ${headerLine}: the header lacks the column${missing.length > 1 ? 's' : ''} ` +
        `${missing.join(', ')}.`] };
  }
  const body = numbered.slice(1);
  if (!body.length) return { rows: [], lines: [],
    errors: [`The file has a header but no steps (line ${headerLine} is the last).`] };
  if (body.length > MAX_ROWS) {
    return { rows: [], lines: [],
      errors: [`The file has ${body.length} steps; at most ${MAX_ROWS} are accepted (sample it first).`] };
  }
  const rows = [], lines = [], errors = [];
  let requests = 0;
  for (const [line, textLine] of body) {
    const cells = splitLine(textLine);
    if (cells.length !== header.length) {
      errors.push(`line ${line}: ${cells.length} cells, but the header has ${header.length} columns.`);
      continue;
    }
    const row = Object.fromEntries(header.map((h, i) => [h, cells[i]]));
    const bad = NUMERIC_COLUMNS.find((c) => row[c] === '' || !Number.isFinite(Number(row[c])));
    if (bad) {
      const where = `line ${line}, column ${header.indexOf(bad) + 1} (${bad})`;
      errors.push(`${where}: "${row[bad].slice(0, 40)}" is not a number.`);
    } else if (!(Number(row[TARGET]) > 0)) {
      errors.push(`line ${line}, column ${header.indexOf(TARGET) + 1} (${TARGET}): must be above 0 us.`);
    } else if (!row.model) {
      errors.push(`line ${line}, column ${header.indexOf('model') + 1} (model): empty.`);
    } else if (countProblem(row, maxRequestsPerStep)) {
      const [column, why] = countProblem(row, maxRequestsPerStep);
      errors.push(`line ${line}, column ${header.indexOf(column) + 1} (${column}): ${why}`);
    } else {
      rows.push(row);
      lines.push(line);
      requests += COUNT_COLUMNS.reduce((sum, c) => sum + Number(row[c]), 0);
    }
  }
  if (maxRequestsInFile !== undefined && requests > maxRequestsInFile) {
    return { rows: [], lines: [],
      errors: [`The file's steps hold ${requests} requests in all; at most ${maxRequestsInFile} ` +
      'are priced (each is priced four times): sample it first.'] };
  }
  return { rows, lines, errors };
}

/**
 * One measured row -> one stepcalc request (the reconstruction documented in
 * docs/ACCURACY.md): decode requests each hold the cache split evenly over the running
 * requests, prefill tokens split evenly over the prefill requests with no cached prefix.
 * With `knownModels` (preset names), an unknown model throws, naming `line`; so do
 * request counts that are not whole numbers >= 0 or (with `maxRequests`) too many.
 */
/**
 * @param {Record<string, string>} row
 * @param {{knownModels?: string[], line?: number, maxRequests?: number}} [options]
 */
export function rebuildStep(row, { knownModels, line, maxRequests } = {}) {
  const num = (k) => Number(row[k]);
  const model = MODEL_PRESETS[row.model] || row.model;
  if (knownModels && !knownModels.includes(model)) {
    throw new Error(`${line ? `line ${line}: ` : ''}model "${String(row.model).slice(0, 60)}" is not a preset; ` +
      `use one of ${[...Object.keys(MODEL_PRESETS), ...knownModels].join(', ')}.`);
  }
  const problem = countProblem(row, maxRequests);
  if (problem) throw new Error(`${line ? `line ${line}: ` : ''}${problem[0]}: ${problem[1]}`);
  const prefillTokens = num('batch.prefill_tokens'), prefillReqs = num('batch.num_prefill_reqs');
  const decodeReqs = num('batch.num_decode_reqs'), running = num('queue.running_depth');
  const cachedTokens = num('kv.usage_gpu_ratio') * num('kv.blocks_total_gpu') * 16;
  const kvPerRequest = Math.round(cachedTokens / Math.max(running, 1));
  const prefill = [];
  for (let i = 0; i < prefillReqs; i++) {
    const n = Math.floor(prefillTokens / prefillReqs) + (i < prefillTokens % prefillReqs ? 1 : 0);
    prefill.push({ progress_index: 0, num_new_prefill_tokens: n });
  }
  const decode = Array.from({ length: decodeReqs }, () => ({ progress_index: kvPerRequest, num_new_decode_tokens: 1 }));
  return { model, gpu: 'H100', tp: num('tp'), step: { prefill_requests: prefill, decode_requests: decode } };
}

const requestsIn = (request) => request.step.prefill_requests.length + request.step.decode_requests.length;

/**
 * Fits cpu_step_us and cpu_per_request_us. The corrected mode's CPU term is additive
 * and linear: predicted = base + cpu_step_us + cpu_per_request_us * requests, where
 * `baseUs` is each step priced with both at 0 (CPU_ZERO). Minimises the squared
 * relative error (weights 1/measured^2) in closed form, both parameters >= 0 (on the
 * boundary the other is refitted alone). The linearity is checked, not assumed: see
 * linearityGapUs, which the tests and the page apply to the fitted pricing (< 1 us).
 */
export function fitCpuParams(measuredUs, baseUs, requests) {
  let s0 = 0, s1 = 0, s2 = 0, t0 = 0, t1 = 0;
  const n = requests.map(requestsIn);
  measuredUs.forEach((m, i) => {
    const w = 1 / (m * m), y = m - baseUs[i];
    s0 += w; s1 += w * n[i]; s2 += w * n[i] * n[i]; t0 += w * y; t1 += w * n[i] * y;
  });
  const loss = (a, c) => measuredUs.reduce((s, m, i) => s + ((baseUs[i] + a + c * n[i] - m) / m) ** 2, 0);
  const det = s0 * s2 - s1 * s1;
  if (det > 1e-12 * s0 * s2) {
    const a = (t0 * s2 - t1 * s1) / det, c = (s0 * t1 - s1 * t0) / det;
    if (a >= 0 && c >= 0) return { cpu_step_us: a, cpu_per_request_us: c };
  }
  const stepOnly = [Math.max(0, t0 / s0), 0];
  const perRequestOnly = [0, s2 > 0 ? Math.max(0, t1 / s2) : 0];
  const [a, c] = loss(...stepOnly) <= loss(...perRequestOnly) ? stepOnly : perRequestOnly;
  return { cpu_step_us: a, cpu_per_request_us: c };
}

/**
 * Largest |priced - (base + fitted CPU terms)| in us. Results are whole microseconds,
 * so a linear CPU term gives at most 1 us (two roundings); checked on the bundled file
 * (0.93 us over 1,251 steps) and by tests/web/calibration.test.mjs.
 */
export function linearityGapUs(pricedUs, baseUs, requests, params) {
  return pricedUs.reduce((gap, p, i) =>
    Math.max(gap, Math.abs(p - (baseUs[i] + params.cpu_step_us + params.cpu_per_request_us * requestsIn(requests[i])))),
      0);
}

/** Errors of predicted vs measured, in percent: MAPE, median APE, mean signed (bias). */
export function errorStats(predicted, measured) {
  const rel = predicted.map((p, i) => (p - measured[i]) / measured[i]);
  const abs = rel.map(Math.abs).sort((a, b) => a - b);
  const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const mid = abs.length >> 1;
  const median = abs.length % 2 ? abs[mid] : (abs[mid - 1] + abs[mid]) / 2;
  return { n: rel.length, mape: 100 * mean(abs), median_ape: 100 * median, bias: 100 * mean(rel) };
}
