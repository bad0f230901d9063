// SPDX-License-Identifier: Apache-2.0
// The roofline of one step: every operator the `measured` mode priced, at its
// arithmetic intensity (FLOPs per byte moved) and the FLOP/s it achieved, under the
// GPU's compute roof (dense BF16, and FP8 where the step runs FP8 kernels) and its
// memory-bandwidth roof. The operator that takes the most time is marked; each point's
// shape says which bound the mode gave it. Values also as a table, and exportable.
import { fill, fixed, h, int, svg, time } from './dom.js';
import { valuesTable } from './charts.js';
import { exportButtons } from './export-buttons.js';

/** Points of the roofline: operators with FLOPs and bytes, [{name, intensity, flops_per_s, us, bound}]. */
export function rooflinePoints(result) {
  return (result.measured?.operators || []).filter((op) => op.flops > 0 && op.bytes > 0 && op.time_us > 0)
    .map((op) => ({
    name: `${op.name}${op.scope && op.scope !== 'layer' ? ` (${op.scope})` : ''}`,
    kind: op.kind, intensity: op.flops / op.bytes, flops_per_s: op.flops / (op.time_us * 1e-6), us: op.time_us,
    bound: op.bound, dtype: op.dtype,
  }));
}

/** The roofs for `spec` (presets().gpu_specs entry) and the dtypes the step uses. */
export function roofs(spec, points) {
  const out = [{ name: 'BF16 peak', flops_per_s: spec.bf16_tflops * 1e12 }];
  if (spec.fp8_tflops > 0 &&
    points.some((p) => p.dtype === 'fp8')) out.push({ name: 'FP8 peak', flops_per_s: spec.fp8_tflops * 1e12 });
  return { compute: out, bandwidth: spec.hbm_bw_bytes_per_s };
}

const decades = (lo, hi) => {
  const out = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(10 ** e);
  return out;
};
const flopsText = (v) =>
  (v >= 1e12 ? `${fixed(v / 1e12, v >= 1e14 ? 0 : 1)} TFLOP/s` : `${fixed(v / 1e9, v >= 1e11 ? 0 : 1)} GFLOP/s`);
const tickText = (v) =>
  (v >= 1e12 ? `${v / 1e12}T` : v >= 1e9 ? `${v / 1e9}G` : v >= 1e6 ? `${v / 1e6}M` : v >= 1e3
  ? `${v / 1e3}k` : String(v));

/** The roofline chart, `width` px wide. */
export function rooflineChart(points, roof, width) {
  const height = Math.round(Math.min(360, Math.max(240, width * 0.55)));
  const pad = { l: 58, r: 14, t: 12, b: 44 };
  const peak = Math.max(...roof.compute.map((c) => c.flops_per_s));
  const xs = points.map((p) => p.intensity), ys = points.map((p) => p.flops_per_s);
  const xLo = Math.min(...xs, 0.5) / 2, xHi = Math.max(...xs, (peak / roof.bandwidth) * 4) * 2;
  const yLo = Math.min(...ys) / 2, yHi = peak * 2;
  const X = (x) => pad.l + (Math.log(x / xLo) / Math.log(xHi / xLo)) * (width - pad.l - pad.r);
  const Y = (y) => pad.t + (1 - Math.log(y / yLo) / Math.log(yHi / yLo)) * (height - pad.t - pad.b);
  const chart = svg('svg', { class: 'roofline', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
    tabindex: 0,
    'aria-label': `Roofline: ${points.length} operators; ` +
      points.map((p) => `${p.name} at ${fixed(p.intensity, 1)} FLOP/byte, ${flopsText(p.flops_per_s)}`).join('; ') });
  for (const x of decades(xLo, xHi).filter((v) => v >= xLo && v <= xHi)) {
    chart.append(svg('line', { x1: X(x), x2: X(x), y1: pad.t, y2: height - pad.b, class: 'grid' }),
      svg('text', { x: X(x), y: height - pad.b + 15, 'text-anchor': 'middle', class: 'tick x-tick' }, tickText(x)));
  }
  for (const y of decades(yLo, yHi).filter((v) => v >= yLo && v <= yHi)) {
    chart.append(svg('line', { x1: pad.l, x2: width - pad.r, y1: Y(y), y2: Y(y), class: 'grid' }),
      svg('text', { x: pad.l - 5, y: Y(y) + 4, 'text-anchor': 'end', class: 'tick y-tick' }, tickText(y)));
  }
  // The roofs: bandwidth (slope 1 in log-log) up to each compute ceiling.
  for (const c of roof.compute) {
    const knee = c.flops_per_s / roof.bandwidth;
    chart.append(svg('path',
      { class: 'roof',
      d: `M${X(xLo)},${Y(roof.bandwidth * xLo)}L${X(knee)},${Y(c.flops_per_s)}L${X(xHi)},${Y(c.flops_per_s)}` }),
      svg('text', { x: width - pad.r - 4, y: Y(c.flops_per_s) - 5, 'text-anchor': 'end', class: 'roof-label' },
        `${c.name} ${flopsText(c.flops_per_s)}`));
  }
  chart.append(svg('text', { x: X(xLo) + 6, y: Y(roof.bandwidth * xLo * 3) - 6, class: 'roof-label' },
    `HBM ${fixed(roof.bandwidth / 1e12, 2)} TB/s`));
  const slowest = points.reduce((a, b) => (b.us > a.us ? b : a), points[0]);
  for (const p of [...points].sort((a, b) => a.us - b.us)) {
    const r = 3 + 7 * Math.sqrt(p.us / slowest.us);
    const cls = `point bound-${/^[\w-]+$/.test(p.bound) ? p.bound : 'other'}${p === slowest ? ' slowest' : ''}`;
    const title = svg('title', {},
      `${p.name}: ${fixed(p.intensity, 1)} FLOP/byte, ${flopsText(p.flops_per_s)}, ${time(p.us * 1e-6)}, ` +
        `${p.bound}-bound`);
    chart.append(p.bound === 'compute'
      ? svg('rect',
        { class: cls, x: X(p.intensity) - r, y: Y(p.flops_per_s) - r, width: 2 * r, height: 2 * r,
        'data-name': p.name }, title)
      : svg('circle', { class: cls, cx: X(p.intensity), cy: Y(p.flops_per_s), r, 'data-name': p.name }, title));
  }
  // The slowest operator's name: above and right of it when there is room (an estimate of
  // 0.6 em per character of the 11 px label), else under it, ending at its right edge (it
  // was cut at the chart's right edge; above it on the left it would cross the roof's label).
  const slowestText = `${slowest.name}: most time`;
  const sx = X(slowest.intensity), sy = Y(slowest.flops_per_s), sr = 3 + 7;
  const right = sx + 10 + slowestText.length * 6.6 <= width - 2;
  chart.append(svg('text', right ? { x: sx + 10, y: Math.max(12, sy - 10), class: 'slowest-label' }
    : { x: Math.min(width - 2, sx + sr), y: sy + sr + 13, 'text-anchor': 'end', class: 'slowest-label' }, slowestText),
    svg('text', { x: pad.l + (width - pad.l - pad.r) / 2, y: height - 6, 'text-anchor': 'middle', class: 'axis-title' },
      'Arithmetic intensity (FLOP per byte, log scale)'),
    svg('text', { x: 12, y: pad.t + (height - pad.t - pad.b) / 2, 'text-anchor': 'middle', class: 'axis-title',
      transform: `rotate(-90 12 ${pad.t + (height - pad.t - pad.b) / 2})` }, 'Achieved FLOP/s (log scale)'));
  return chart;
}

/** Fills the roofline section for `result`, or hides it when the mode has no operators. */
export function renderRoofline(result, spec, root, width, about = undefined) {
  const section = root.closest('section');
  const points = rooflinePoints(result);
  section.hidden = !points.length || !spec;
  if (section.hidden) return root.replaceChildren();
  const roof = roofs(spec, points);
  const peakOf = (p) => Math.min(Math.max(...roof.compute.map((c) => c.flops_per_s)), roof.bandwidth * p.intensity);
  const chart = rooflineChart(points, roof, width);
  const head = ['Operator', 'FLOP/byte', 'Achieved', 'Of its roof', 'Time', 'Bound'];
  const rows = points.map((p) =>
    [p.name, fixed(p.intensity, 1), flopsText(p.flops_per_s), `${fixed((100 * p.flops_per_s) / peakOf(p), 0)}%`,
    time(p.us * 1e-6), p.bound]);
  const skipped = (result.measured?.operators || []).length - points.length;
  // The chart takes the focus: the arrow keys go from operator to operator (by intensity),
  // the readout names each, as the sweeps do; hovering a point does the same.
  const readout = h('p', { class: 'readout', 'aria-live': 'polite', 'data-testid': 'roofline-readout',
    text: 'Focus the chart and use the arrow keys, or hover a point, to read each operator.' });
  const marks = [...chart.querySelectorAll('.point')].map((el, i) => ({ el, p: points.find((q) =>
    q.name === el.getAttribute('data-name')) ?? points[i] })).sort((a, b) => a.p.intensity - b.p.intensity);
  let at = -1;
  const show = (i) => {
    marks[at]?.el.classList.remove('selected');
    at = Math.max(0, Math.min(marks.length - 1, i));
    const { el, p } = marks[at];
    el.classList.add('selected');
    readout.textContent = `${p.name}: ${fixed(p.intensity, 1)} FLOP/byte, ${flopsText(p.flops_per_s)} ` +
      `(${fixed((100 * p.flops_per_s) / peakOf(p), 0)}% of its roof), ${time(p.us * 1e-6)}, ${p.bound}-bound ` +
      `(${at + 1} of ${marks.length})`;
  };
  chart.setAttribute('aria-describedby', 'roofline-legend');
  chart.addEventListener('keydown', (e) => {
    const d = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, End: marks.length,
      Home: -marks.length }[e.key];
    if (d === undefined) return;
    e.preventDefault();
    show(at < 0 ? 0 : at + d);
  });
  chart.addEventListener('focus', () => {
    if (at < 0) show(marks.findIndex((m) => m.el.classList.contains('slowest')));
  });
  for (const [i, m] of marks.entries()) m.el.addEventListener('pointerenter', () => show(i));
  fill(root, chart, readout,
    h('ul', { class: 'legend', id: 'roofline-legend', 'data-testid': 'roofline-legend' },
      h('li', {}, h('span', { class: 'swatch point-swatch bound-compute' }), 'compute-bound (square)'),
      h('li', {}, h('span', { class: 'swatch point-swatch round bound-memory' }), 'memory-bound (circle)'),
      h('li', {}, h('span', { class: 'swatch point-swatch round bound-other' }), 'latency or launch-bound'),
      h('li', {}, h('span', { class: 'swatch point-swatch round ring' }),
        'ringed: the operator that takes the most time'),
      h('li', {}, 'size: time in the step; lines: the GPU\'s compute and HBM bandwidth roofs')),
    skipped > 0
      ? h('p', { class: 'muted', text: `${int(skipped)} operator${skipped === 1 ? '' : 's'} without FLOPs ` +
        '(communication, copies) are not on the plot.' })
      : null,
    valuesTable('Roofline', head, rows),
    exportButtons({ name: 'stepcalc-roofline', label: 'the roofline', chart: () => chart, about,
      csv: () =>
        ({ head: ['operator', 'kind', 'flop_per_byte', 'achieved_flop_per_s', 'roof_flop_per_s', 'time_us', 'bound'],
        rows: points.map((p) => [p.name, p.kind, p.intensity, p.flops_per_s, peakOf(p), p.us, p.bound]) }) }));
}
