// SPDX-License-Identifier: Apache-2.0
// "Calibrate with your own measurements": a CSV of measured steps, opened or dropped,
// is rebuilt into requests, priced in blis-v2 and corrected, and the corrected mode's
// two CPU parameters are fitted to it (web/calibration.js). Loaded when the panel is
// first opened. The file is read with Blob.text() in this browser; nothing is sent.
import { fill, h, int } from './dom.js';
import {
  parseStepsCsv, rebuildStep, fitCpuParams, linearityGapUs, errorStats, CPU_ZERO, TARGET, NUMERIC_COLUMNS, MAX_ROWS,
} from './calibration.js';
import { MODE } from './catalogue.js';

const SAMPLE = 'data/calibration/h100-vllm-steps-llama-2-70b-tp4.csv';
const BATCH = 200; // steps per priceAll call at most; the page handles input between batches
const MAX_BYTES = 16 << 20;
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));
const round1 = (x) => Math.round(x * 10) / 10;

class Refusal extends Error {
  constructor(messages) {
    super(messages[0]);
    this.messages = messages;
  }
}

function explanation() {
  const code = (t) => h('code', { text: t });
  const columns = ['model', ...NUMERIC_COLUMNS];
  return [
    h('p', {}, 'A CSV with one measured engine step per line, in the columns of the bundled calibration file ',
      '(data/calibration/README.md in the repository). Used: ', columns.flatMap((c, i) => [i ? ', ' : '', code(c)]),
      `; other columns are ignored; at most ${MAX_ROWS.toLocaleString('en-US')} steps. `, code(TARGET),
      ' is the measured cycle in us (this step\'s start to the next one\'s) and is what is predicted.'),
    h('p', {}, 'Each line becomes one step on an H100 at its ', code('tp'), ': ', code('batch.num_decode_reqs'),
      ' decode requests, each holding ', code('kv.usage_gpu_ratio × kv.blocks_total_gpu × 16 / queue.running_depth'),
      ' KV tokens, and ', code('batch.prefill_tokens'), ' split evenly over ', code('batch.num_prefill_reqs'),
      ' prefill requests with no cached prefix. The model is a preset name (', code('llama-2-70b'), ' means ',
      code('llama-2-70b-hf'), '). Only ', code('cpu_step_us'), ' and ', code('cpu_per_request_us'),
      ' are fitted, by least squares on the relative error.'),
    h('p', { class: 'muted', text: 'The file is read in this browser and never leaves it.' }),
  ];
}

/**
 * Builds the panel into `root`; "Apply" replaces the store's state with the fitted one.
 * @param {import('./store.js').PanelContext} context @param {HTMLElement} root
 */
export function calibratePanel({ calc, presets, store }, root) {
  const input = h('input', { type: 'file', accept: '.csv,text/csv', id: 'calibrate-file' });
  const drop = h('div', { class: 'drop-zone', 'data-testid': 'calibrate-drop' },
    h('label', { for: 'calibrate-file', text: 'Open a CSV of measured steps, or drop it here: ' }), input);
  const sample = h('button', { type: 'button', text: 'Try it with the bundled sample' });
  const progress = h('progress', { max: 1, value: 0, hidden: true });
  const status = h('p', { class: 'muted', 'aria-live': 'polite' });
  const out = h('div', { 'data-testid': 'calibration-result' });
  fill(root, ...explanation(), drop, h('div', { class: 'actions' }, sample), progress, status, out);
  let run = 0;

  // The core's request limits (this panel is bundled on its own: it asks the module).
  const { limits } = calc.catalogue();
  const size = (r) => r.step.prefill_requests.length + r.step.decode_requests.length;
  /** The end of the batch from `start`: at most BATCH steps and one step's worth of requests. */
  function batchEnd(requests, start) {
    let end = start + 1;
    for (let n = size(requests[start]); end < requests.length && end - start < BATCH; end++) {
      n += size(requests[end]);
      if (n > limits.requests_per_step) break;
    }
    return end;
  }

  /** Step times of `requests` in `mode`, a batch per task; null once a newer file came. */
  async function priceAllIn(id, requests, lines, mode, params, done) {
    const times = [];
    for (let start = 0, end; start < requests.length; start = end) {
      end = batchEnd(requests, start);
      const batch = requests.slice(start, end).map((r) => (params ? { ...r, corrected: { params } } : r));
      const results = calc.priceAll(batch, { mode, detail: 'summary' }); // step times only
      results.forEach((r, i) => {
        if (r.error) {
          throw new Refusal([`line ${lines[start + i]}: ${r.error.path ? `${r.error.path}: ` : ''}${r.error.message}`]);
        }
        times.push(r.step_time_us);
      });
      done(batch.length, mode);
      await nextTask();
      if (id !== run) return null;
    }
    return times;
  }

  async function calibrate(id, text, name) {
    const { rows, lines, errors } = parseStepsCsv(text,
      { maxRequestsPerStep: limits.requests_per_step, maxRequestsInFile: limits.sweep_requests });
    if (errors.length) throw new Refusal(errors);
    const known = presets.models.map((m) => m.name);
    const requests = [], bad = [];
    rows.forEach((row, i) => {
      try {
        requests.push(rebuildStep(row, { knownModels: known, line: lines[i], maxRequests: limits.requests_per_step }));
      } catch (error) {
        bad.push(error.message);
      }
    });
    if (bad.length) throw new Refusal(bad);
    const measured = rows.map((r) => Number(r[TARGET]));
    let done = 0;
    progress.hidden = false;
    progress.max = 4 * requests.length;
    const step = (n, mode) => {
      done += n;
      progress.value = done;
      const percent = Math.round((100 * done) / progress.max);
      status.textContent = `${name}: pricing ${requests.length} steps in ${mode}, ${percent}%…`;
    };
    const reference = await priceAllIn(id, requests, lines, MODE.reference, null, step);
    const defaults = reference && await priceAllIn(id, requests, lines, MODE.corrected, null, step);
    const base = defaults && await priceAllIn(id, requests, lines, MODE.corrected, CPU_ZERO, step);
    if (!base) return;
    const raw = fitCpuParams(measured, base, requests);
    const params = { cpu_step_us: round1(raw.cpu_step_us), cpu_per_request_us: round1(raw.cpu_per_request_us) };
    const fitted = await priceAllIn(id, requests, lines, MODE.corrected, params, step);
    if (!fitted) return;
    progress.hidden = true;
    status.textContent = `${name}: ${requests.length} steps.`;
    const gap = linearityGapUs(fitted, base, requests, params);
    show([[MODE.reference, reference], [`${MODE.corrected} (defaults)`, defaults],
      [`${MODE.corrected} (fitted: cpu_step_us=${params.cpu_step_us}, cpu_per_request_us=${params.cpu_per_request_us})`,
        fitted]]
      .map(([label, p]) => ({ label, ...errorStats(p, measured) })), params, gap, source(name, requests));
  }

  /** What a fit was made from, in words: "the bundled sample: 1,251 steps of llama-2-70b-hf at TP 4". */
  function source(name, requests) {
    const setups = [...new Set(requests.map((r) => `${r.model} at TP ${r.tp}`))];
    const setupText = setups.length > 3 ? `${setups.length} model and TP settings` : setups.join(', ');
    return { text: `${name}: ${int(requests.length)} steps of ${setupText}`, setups };
  }

  function show(table, params, gap, from) {
    const f2 = (x) => x.toFixed(2);
    const { state } = store;
    const model = typeof state.model === 'string' ? state.model : state.modelName || 'a custom shape';
    const shown = `${model} at TP ${state.tp}`;
    const caveat = from.setups.includes(shown) ? ''
      : ` The step shown is ${shown}: CPU costs fitted on other models or TP degrees may not carry over to it.`;
    const apply = h('button',
      { type: 'button', 'data-testid': 'apply-fit', text: 'Apply fitted parameters to the corrected mode',
      onclick: () => {
        const now = store.state;
        const keep = now.mode === MODE.corrected ? now.corrected || {} : {};
        // A new mode and settings: every panel shows them (replace, not set).
        store.replace({ ...now, corrected: { ...keep, params: { ...(keep.params || {}), ...params } },
          mode: MODE.corrected });
        apply.textContent = 'Applied: the step is priced in corrected with these parameters';
      } });
    fill(out, 
      h('table', { class: 'modes calibration' },
        h('thead', {},
          h('tr', {}, ['Model', 'Steps', 'MAPE', 'Median APE', 'Bias'].map((t) => h('th', { scope: 'col', text: t })))),
        h('tbody', {}, table.map((r) => h('tr', {}, h('th', { scope: 'row', text: r.label }),
          [String(r.n), `${f2(r.mape)}%`, `${f2(r.median_ape)}%`, `${r.bias >= 0 ? '+' : ''}${f2(r.bias)}%`]
            .map((t) => h('td', { class: 'num', text: t })))))),
      h('p',
        { class: 'muted', text: 'Errors are (predicted - measured) / measured; bias > 0: the model overestimates. ' +
        (gap <= 1 ? 'The CPU term added linearly (checked to within 1 us on every step).'
          : `The CPU term did not add linearly (up to ${gap.toFixed(0)} us off); the fit is approximate.`) }),
      h('div', { class: 'actions' }, apply),
      h('p', { class: 'muted', 'data-testid': 'fit-source', text: `Fitted on ${from.text}.${caveat}` }));
  }

  function start(load, name) {
    const id = ++run;
    out.replaceChildren();
    status.textContent = `Reading ${name}…`;
    load().then((text) => id === run && calibrate(id, text, name)).catch((error) => {
      if (id !== run) return;
      progress.hidden = true;
      status.textContent = '';
      const messages = error instanceof Refusal ? error.messages : [`${name}: ${error.message}`];
      fill(out, h('p', { class: 'field-error', 'data-testid': 'error', role: 'alert', text: messages[0] }),
        messages.length > 1 && h('ul', { class: 'field-error' }, messages.slice(1, 6).map((m) => h('li', { text: m })),
          messages.length > 6 && h('li', { text: `and ${messages.length - 6} more` })));
    });
  }
  function openFile(file) {
    if (!file) return;
    if (file.size > MAX_BYTES) {
      const tooBig = `the file is ${(file.size / 2 ** 20).toFixed(0)} MiB; ` +
        `at most ${MAX_BYTES / 2 ** 20} MiB are read.`;
      start(() => Promise.reject(new Error(tooBig)), file.name);
    } else {
      start(() => file.text(), file.name);
    }
  }

  input.addEventListener('change', () => openFile(input.files[0]));
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('drop'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('drop'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('drop');
    openFile(e.dataTransfer.files[0]);
  });
  sample.addEventListener('click', () => start(async () => {
    const response = await fetch(SAMPLE);
    if (!response.ok) throw new Error(`could not fetch it (HTTP ${response.status}).`);
    return response.text();
  }, 'the bundled sample'));
}
