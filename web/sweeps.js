// SPDX-License-Identifier: Apache-2.0
// Sweeps: step time against prefill length, decode batch size and KV length, each
// priced by the module's sweep() around the current step, which is marked.
import { h, int, timeUs, tokens } from './dom.js';

const capital = (t) => t.charAt(0).toUpperCase() + t.slice(1);
import { lineChart, valuesTable } from './charts.js';
import { exportButtons } from './export-buttons.js';
import { catalogue } from './catalogue.js';

const powers = (from, to) => {
  const out = [];
  for (let v = from; v <= to; v *= 2) out.push(v);
  return out;
};
const withValue = (values, v) => (v > 0 && !values.includes(v) ? [...values, v].sort((a, b) => a - b) : values);
const mean = (xs) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
const isNumber = (v) => typeof v === 'number';

/** The three sweeps for a priced state: [{axis, title, values, current, note}]. */
export function sweepPlans(state, result) {
  const first = state.prefill[0]?.[1];
  const kvs = state.decode.map((r) => r[0]).filter(isNumber);
  const n = state.decode.length;
  const y = result.step_time_us;
  const room = catalogue.limits.requests_per_step - state.prefill.length;
  return [
    { axis: 'prefill_tokens', title: 'Step time vs. prefill length', unit: 'new prefill tokens',
      values: withValue(powers(128, 32768), first), current: first > 0 ? { x: first, y } : null,
      note: state.prefill.length
        ? 'Varies the new tokens of the first prefill row.' : 'The step has no prefill; the sweep adds one.' },
    { axis: 'decode_batch', title: 'Step time vs. decode batch size', unit: 'decodes in the batch',
      values: withValue(powers(1, Math.min(room, Math.max(512, 2 ** Math.ceil(Math.log2(n + 1))))), n)
        .filter((v) => v <= room),
      current: n > 0 ? { x: n, y } : null,
      note: n
        ? 'Repeats the current decode rows to reach each batch size.'
        : `The step has no decodes; the sweep uses KV ${int(catalogue.sweep.default_decode_kv)}.` },
    { axis: 'decode_kv', title: 'Step time vs. KV length', unit: 'KV length',
      values: withValue(powers(256, 131072), kvs.length ? mean(kvs) : 0),
        current: kvs.length ? { x: mean(kvs), y } : null,
      note: new Set(kvs).size > 1 ? 'Sets every decode to one KV length; the current (mixed) step sits at the mean KV.'
        : 'Sets every decode row to one KV length.' },
  ];
}

/** Requests priced per task at most (one point may exceed it): input is handled between tasks. */
const TASK_REQUESTS = 1 << 17;

/** `values` in chunks whose pricing work stays under TASK_REQUESTS requests. */
function chunks(values, cost) {
  const out = [];
  let chunk = [];
  let work = 0;
  for (const v of values) {
    if (chunk.length && work + cost(v) > TASK_REQUESTS) {
      out.push(chunk);
      chunk = [];
      work = 0;
    }
    chunk.push(v);
    work += cost(v);
  }
  if (chunk.length) out.push(chunk);
  return out;
}

/**
 * The sweeps as tasks: each prices a chunk of one sweep's points (a bounded number of
 * requests, so a 65,536-request step does not block input for seconds) or draws one
 * sweep into its own slot of `root` (`width` px wide), so the page can yield to input
 * between them. A big step's chunks are priced in the pricing worker (web/pricer.js): such a
 * task returns the promise of its points. `about(what, title)`: the About of an export
 * (web/export-about.js).
 * @param {{calc: any, pricer: ReturnType<typeof import('./pricer.js').createPricer>}} pricing
 */
export function sweepTasks({ calc, pricer }, request, state, result, root, width, about = undefined) {
  const plans = sweepPlans(state, result);
  while (root.children.length > plans.length) root.lastElementChild.remove();
  while (root.children.length < plans.length) root.append(h('section', { class: 'sweep' }));
  const rows = state.prefill.length + state.decode.length + 1;
  const big = pricer.big(request);
  return plans.flatMap((plan, i) => {
    const cost = (v) => (plan.axis === 'decode_batch' ? state.prefill.length + v : rows);
    const points = [];
    let failure = null;
    // Summary detail as typed columns (one row object per point only here, for the chart).
    const take = (values, columns) => {
      const errors = new Map(columns.errors.map((e) => [e.index, e]));
      values.forEach((value, j) => points.push(errors.has(j) ? { value, error: errors.get(j) }
        : { value, step_time_us: columns.step_time_us[j], bound: columns.bound[j] }));
    };
    const pricing = chunks(plan.values, cost).map((values) => () => {
      if (failure) return undefined;
      if (big) {
        return pricer.sweep(request, plan.axis, values).then((columns) => take(values, columns), (error) => {
          if (error.code !== 'cancelled') failure = error; // cancelled: a newer edit drops these tasks
        });
      }
      try {
        take(values, calc.sweepColumns(request, plan.axis, values));
      } catch (error) {
        failure = error;
      }
      return undefined;
    });
    return [...pricing, () => root.children[i].replaceWith(sweepSection(plan, points, failure, width,
      about?.(`sweep-${plan.axis.replace(/_/g, '-')}`, `sweep: ${plan.title.toLowerCase()}`)))];
  });
}

function sweepSection(plan, points, failure, width, about) {
  if (failure) {
    return h('section', { class: 'sweep' }, h('h3', { text: plan.title }),
      h('p', { class: 'field-error', 'data-testid': 'error', text: failure.message }));
  }
  // Only the sweep's own round values get tick labels; the current step's value is
  // marked on the curve, not written on the axis (it would crowd its neighbours).
  const round = new Set(plan.values.filter((v) => v !== plan.current?.x || (v & (v - 1)) === 0));
  const data = points.map((p) => ({ x: p.value, y: p.error ? NaN : p.step_time_us, bound: p.bound,
    tick: round.has(p.value) ? tokens(p.value, true) : '', error: p.error }));
  const readout = h('p',
    { class: 'readout', 'aria-live': 'polite',
    text: 'Hover or focus the chart and use the arrow keys to read values.' });
  const describe = (p) => `${int(p.x)} ${plan.unit}: ${timeUs(p.y)} (${int(p.y)} µs), bound by ${p.bound}`
    + (plan.current && p.x === plan.current.x ? ' (the current step\'s value)' : '');
  const failed = data.filter((p) => p.error);
  const priced = data.filter((p) => Number.isFinite(p.y));
  const body = priced.length
    ? [lineChart({ points: data, current: plan.current, width, label: `${plan.title}; ${plan.note}`,
      xTitle: capital(plan.unit), describe, readout }),
      valuesTable(plan.title, [capital(plan.unit), 'Step time', 'Bound by'],
        priced.map((p) =>
          [int(p.x) + (plan.current && p.x === plan.current.x ? ' (current)' : ''), timeUs(p.y), p.bound]))]
    : h('p', { class: 'muted', text: 'No point of this sweep could be priced.' });
  const exports = priced.length ? exportButtons({ name: `stepcalc-sweep-${plan.axis}`, label: plan.title,
    csv: () => ({ head: [plan.axis, 'step_time_us', 'bound', 'current'],
      rows: data.map((p) =>
        [p.x, Number.isFinite(p.y) ? p.y : '', p.bound ?? p.error?.message ?? '',
        plan.current && p.x === plan.current.x ? 'yes' : '']) }),
    chart: () => section.querySelector('svg.line'), about }) : null;
  const section = h('section', { class: 'sweep' }, h('h3', { text: plan.title }), body, readout, exports,
    h('small',
      { class: 'muted',
      text: plan.note + (failed.length
      ? ` ${failed.length} point(s) could not be priced: ${failed[0].error.message}` : '') }));
  return section;
}
