// SPDX-License-Identifier: Apache-2.0
// Hand-written SVG charts: the step's time breakdown as stacked bars, and a line
// chart (log x) with the current step marked and a hover/keyboard readout. Every
// chart has its values as a table too (under "Values as a table"), so nothing needs a
// mouse; axes have titles with units, "nice" ticks, and labels that never overlap.
import { h, svg, time, pct, fixed, int } from './dom.js';

const PHASES = { prefill: 'Prefill', decode: 'Decode' };
const MEMORY = { weights: 'weights read', kv_read: 'KV read', kv_write: 'KV write', activations: 'activations' };
// GEMMs grouped as vLLM fuses them (qkv_proj, o_proj, gate_up_proj, down_proj); the
// lookup table keeps each of the reference's seven GEMMs.
const GEMM_GROUP = { q: 'qkv', k: 'qkv', v: 'qkv', o: 'o', gate: 'gate_up', up: 'gate_up', down: 'down' };
const GEMM_NAME = { qkv: 'QKV GEMM', o: 'output GEMM', gate_up: 'gate/up GEMM', down: 'down GEMM' };
const cls = (key) => `c-${/^[\w-]+$/.test(key) ? key : 'other'}`;

// measured: vLLM's operators grouped into the same colours (one forward pass over all
// of the step's tokens, as vLLM runs it).
const OP_GROUP = { qkv_proj: 'qkv', o_proj: 'o', gate_up_proj: 'gate_up', down_proj: 'down' };
const KIND_GROUP = { attention: 'attn', mla: 'attn', all_reduce: 'comm', gather: 'comm', gemm: 'gemm', moe: 'gemm',
  elementwise: 'memory' };
const GROUP_NAME = { qkv: 'QKV GEMM', o: 'output GEMM', gate_up: 'gate/up GEMM', down: 'down GEMM', attn: 'attention',
  comm: 'all-reduce and gathers', gemm: 'MoE, router and LM-head GEMMs',
    memory: 'small kernels (norms, rotary, activation)',
  other: 'other operators' };

function measuredRows(result) {
  const m = result.measured;
  const groups = new Map();
  for (const op of m.operators) {
    const key = OP_GROUP[op.name] || KIND_GROUP[op.kind] || 'other';
    groups.set(key, (groups.get(key) || 0) + op.time_us * 1e-6);
  }
  const segments = [...groups].map(([key, s]) => ({ key, name: GROUP_NAME[key], s }));
  const overhead_s = result.overhead_us * 1e-6;
  return [
    { label: 'Step', total_s: result.step_time_us * 1e-6, binds: true,
      segments: [{ key: 'step', name: 'GPU forward pass', s: m.gpu_time_us * 1e-6 },
        { key: 'overhead', name: 'CPU overhead', s: overhead_s }] },
    { label: 'GPU forward pass (measured kernels)', total_s: m.gpu_time_us * 1e-6, binds: true, segments },
    { label: 'CPU overhead', total_s: overhead_s, binds: true,
      segments: [{ key: 'overhead', name: 'CPU overhead', s: overhead_s }] },
  ];
}

/** Bars of the breakdown: [{label, total_s, binds, segments: [{key, name, s}]}]. */
export function breakdownRows(result) {
  if (result.measured?.operators) return measuredRows(result);
  const rows = [];
  for (const [phase, title] of Object.entries(PHASES)) {
    const p = result.phases?.[phase];
    if (!p) continue;
    const gemms = phase === 'prefill' ? (p.buckets || []).flatMap((b) => b.gemms || []) : p.gemms || [];
    const byKind = new Map();
    for (const g of gemms) {
      const key = GEMM_GROUP[g.kind] || g.kind;
      byKind.set(key, (byKind.get(key) || 0) + g.time_s);
    }
    const sum = [...byKind.values()].reduce((a, b) => a + b, 0);
    const scale = sum > 0 ? p.gemm_time_s / sum : 0;
    const compute = [...byKind].map(([key, s]) => ({ key, name: GEMM_NAME[key] || `${key} GEMM`, s: s * scale }));
    compute.push({ key: 'attn', name: 'attention', s: p.attn_core_time_s });
    const rest = p.compute_s - compute.reduce((a, x) => a + x.s, 0);
    if (rest > p.compute_s * 1e-6) compute.push({ key: 'other', name: 'other compute', s: rest });
    const bytes = p.memory_bytes || {};
    const totalBytes = Object.values(bytes).reduce((a, b) => a + b, 0);
    const memory = Object.entries(bytes)
      .map(([key, b]) => ({ key, name: MEMORY[key] || key, s: totalBytes ? (p.memory_s * b) / totalBytes : 0 }));
    const computeBound = p.bound_by === 'compute';
    rows.push({ label: `${title} compute`, total_s: p.compute_s, binds: computeBound, segments: compute });
    rows.push({ label: `${title} memory`, total_s: p.memory_s, binds: !computeBound, segments: memory });
    if (p.comm_s > 0) rows.push({ label: `${title} all-reduce (added)`, total_s: p.comm_s, binds: true,
      segments: [{ key: 'comm', name: 'all-reduce', s: p.comm_s }] });
  }
  const fused = result.corrected?.fused;
  const overhead_s = result.overhead_us * 1e-6;
  const hardware_s = result.breakdown?.step_hardware_s ?? result.phases?.[result.bound]?.time_s ?? 0;
  if (fused) {
    // The fused pass is what the step costs: it comes first, the phases priced on
    // their own (for comparison) after it.
    for (const row of rows) row.binds = false;
    const fusedRows = [
      { label: 'Fused pass compute', total_s: fused.compute_s, binds: fused.compute_s >= fused.memory_s,
        segments: [{ key: 'gemm', name: 'all GEMMs', s: fused.gemm_time_s },
          { key: 'attn', name: 'attention', s: fused.attn_core_time_s }] },
      { label: 'Fused pass memory', total_s: fused.memory_s, binds: fused.memory_s > fused.compute_s,
        segments: [{ key: 'memory', name: 'all memory traffic', s: fused.memory_s }] },
    ];
    if (fused.comm_s > 0) fusedRows.push({ label: 'Fused all-reduce (added)', total_s: fused.comm_s, binds: true,
      segments: [{ key: 'comm', name: 'all-reduce', s: fused.comm_s }] });
    rows.unshift(...fusedRows);
  }
  rows.push({ label: 'CPU overhead', total_s: overhead_s, binds: true,
    segments: [{ key: 'overhead', name: 'CPU overhead', s: overhead_s }] });
  const what = fused ? 'one fused forward pass' : PHASES[result.bound]
    ? `${PHASES[result.bound]} (binding phase)` : 'GPU time';
  rows.unshift({ label: 'Step', total_s: result.step_time_us * 1e-6, binds: true,
    segments: [{ key: 'step', name: what, s: hardware_s }, { key: 'overhead', name: 'CPU overhead', s: overhead_s }] });
  return rows;
}

/** The breakdown's values for CSV: one line per bar and per part of a bar, times in µs. */
export function breakdownCsv(result) {
  const rows = [];
  for (const r of breakdownRows(result)) {
    rows.push([r.label, '', r.total_s * 1e6, 1, r.binds ? 'yes' : 'no']);
    if (r.segments.length > 1) for (const s of r.segments) rows.push([r.label, s.name, s.s * 1e6,
      r.total_s ? s.s / r.total_s : '', r.binds ? 'yes' : 'no']);
  }
  return { head: ['bar', 'part', 'time_us', 'share_of_bar', 'binds'], rows };
}

/**
 * A collapsed table of a chart's values: `head` column titles, `rows` of cells (a first cell indented by two
 * spaces is a part of the row above).
 */
export function valuesTable(caption, head, rows) {
  return h('details', { class: 'values' }, h('summary', { text: 'Values as a table' }),
    h('table', { class: 'values-table' }, h('caption', { class: 'sr-only', text: caption }),
      h('thead', {}, h('tr', {}, head.map((t, i) => h('th', { scope: 'col', class: i ? 'num' : '', text: t })))),
      h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c, i) => (i ? h('td', { class: 'num', text: c })
        : h('th', { scope: 'row', class: c.startsWith('  ') ? 'sub' : null, text: c.trim() }))))))));
}

/**
 * The breakdown chart for `result`, `width` px wide, with a legend and a values table.
 * `bindingOnly` (the embed) leaves out the bars that do not bind.
 */
export function breakdownChart(result, width, { bindingOnly = false } = {}) {
  const rows = breakdownRows(result).filter((r) => r.binds || !bindingOnly);
  const max = Math.max(...rows.map((r) => Math.max(r.total_s, r.segments.reduce((a, s) => a + s.s, 0))), 1e-12);
  const rowH = 34;
  const chart = svg('svg',
    { class: 'breakdown', width, height: rows.length * rowH, viewBox: `0 0 ${width} ${rows.length * rowH}`,
    role: 'img', 'aria-label': `Where the time goes: ${rows.map((r) => `${r.label} ${time(r.total_s)}`).join(', ')}` });
  const seen = new Map();
  rows.forEach((row, i) => {
    const y = i * rowH;
    const dim = row.binds ? '' : ' idle';
    chart.append(svg('text', { x: 0, y: y + 12, class: `row-label${dim}` },
      row.label + (row.binds ? '' : ' (not binding)')),
      svg('text', { x: width, y: y + 12, class: `row-value${dim}`, 'text-anchor': 'end' }, time(row.total_s)));
    let x = 0;
    for (const seg of row.segments) {
      const w = (seg.s / max) * width;
      if (!seen.has(seg.key)) seen.set(seg.key, seg.name);
      if (w > 0) {
        chart.append(svg('rect',
          { x, y: y + 16, width: Math.max(w, 0.5), height: row.binds ? 13 : 7, class: `seg ${cls(seg.key)}${dim}` },
          svg('title', {}, `${row.label}: ${seg.name} ${time(seg.s)} (${pct(seg.s / (row.total_s || 1))})`)));
      }
      x += w;
    }
  });
  const legend = h('ul', { class: 'legend', 'aria-hidden': 'true' }, [...seen].map(([key, name]) =>
    h('li', {}, h('span', { class: `swatch ${cls(key)}` }), name)));
  const table = valuesTable('Where the time goes', ['Bar and part', 'Time', 'Share of the bar'],
    rows.flatMap((r) => [[`${r.label}${r.binds ? '' : ' (not binding)'}`, time(r.total_s), ''],
      ...(r.segments.length > 1
        ? r.segments.map((s) => [`  ${s.name}`, time(s.s), pct(s.s / (r.total_s || 1))]) : [])]));
  return h('div', {}, chart, legend, table);
}

/** About `count` round tick values from 0 to at least `max` (1, 2, 2.5 or 5 times a power of ten). */
export function niceTicks(max, count = 4) {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const ticks = [];
  for (let v = 0; v < max + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  if (ticks[ticks.length - 1] < max) ticks.push(Number((ticks[ticks.length - 1] + step).toPrecision(12)));
  return ticks;
}

/** A time axis unit for values up to `maxUs` microseconds: {unit, scale, digits}. */
function timeUnit(maxUs, step) {
  const ms = maxUs >= 2000;
  const stepIn = ms ? step / 1000 : step;
  return { unit: ms ? 'ms' : 'µs', scale: ms ? 1e-3 : 1,
    digits: stepIn >= 1 || stepIn === 0 ? 0 : stepIn >= 0.1 ? 1 : 2 };
}

/** Estimated width in px of a tick label at 11 px (no layout is read to draw). */
const labelWidth = (text) => text.length * 6.6 + 6;

/**
 * Indices of the labels to draw at positions `xs` (ascending) so that none overlaps
 * its neighbour: the first and last are kept, others only with room around them.
 */
export function spacedLabels(xs, texts, minGap = 6) {
  const keep = [];
  const room = (i, j) => Math.abs(xs[j] - xs[i]) >= (labelWidth(texts[i]) + labelWidth(texts[j])) / 2 + minGap;
  const last = xs.length - 1;
  for (let i = 0; i <= last; i++) {
    if (keep.length && !room(keep[keep.length - 1], i)) continue;
    if (i !== last && last > 0 && !room(i, last)) continue;
    keep.push(i);
  }
  return keep;
}

/**
 * A line chart of points [{x, y (µs), tick}] over log x. `xTitle`/`yTitle` name the
 * axes; `readout` shows the hovered or keyboard-selected point via `describe`.
 */
export function lineChart({ points, current, width, height = 190, label, xTitle, describe, readout }) {
  const pad = { l: 54, r: 16, t: 10, b: 44 };
  const xs = points.map((p) => p.x).concat(current ? [current.x] : []).filter((x) => x > 0);
  const lo = Math.log(Math.min(...xs)), hi = Math.log(Math.max(...xs));
  const finite = points.filter((p) => Number.isFinite(p.y));
  const yTop = Math.max(...finite.map((p) => p.y), current?.y || 0);
  const ticks = niceTicks(yTop, 4);
  const yMax = ticks[ticks.length - 1] || 1;
  const unit = timeUnit(yMax, ticks[1] - ticks[0]);
  const X = (x) => pad.l + ((Math.log(Math.max(x, Math.exp(lo))) - lo) / (hi - lo || 1)) * (width - pad.l - pad.r);
  const Y = (y) => pad.t + (1 - y / yMax) * (height - pad.t - pad.b);
  const chart = svg('svg',
    { class: 'line', width, height, viewBox: `0 0 ${width} ${height}`, tabindex: 0, role: 'img', 'aria-label': label });
  for (const t of ticks) {
    chart.append(svg('line', { x1: pad.l, x2: width - pad.r, y1: Y(t), y2: Y(t), class: 'grid' }),
      svg('text', { x: pad.l - 5, y: Y(t) + 4, 'text-anchor': 'end', class: 'tick y-tick' },
        fixed(t * unit.scale, unit.digits)));
  }
  const ticked = points.filter((p) => p.tick);
  for (const i of spacedLabels(ticked.map((p) => X(p.x)), ticked.map((p) => p.tick))) {
    const p = ticked[i];
    chart.append(svg('line', { x1: X(p.x), x2: X(p.x), y1: height - pad.b, y2: height - pad.b + 4, class: 'axis' }),
      svg('text', { x: X(p.x), y: height - pad.b + 15, 'text-anchor': 'middle', class: 'tick x-tick' }, p.tick));
  }
  chart.append(svg('line', { x1: pad.l, x2: width - pad.r, y1: height - pad.b, y2: height - pad.b, class: 'axis' }),
    svg('text', { x: pad.l + (width - pad.l - pad.r) / 2, y: height - 6, 'text-anchor': 'middle', class: 'axis-title' },
      `${xTitle} (log scale)`),
    svg('text', { x: 12, y: pad.t + (height - pad.t - pad.b) / 2, 'text-anchor': 'middle', class: 'axis-title',
      transform: `rotate(-90 12 ${pad.t + (height - pad.t - pad.b) / 2})` }, `Step time (${unit.unit})`));
  chart.append(svg('path',
    { class: 'curve', d: finite.map((p, i) => `${i ? 'L' : 'M'}${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`).join('') }));
  if (current) {
    chart.append(svg('line', { class: 'now-line', x1: X(current.x), x2: X(current.x), y1: pad.t, y2: height - pad.b }),
      svg('circle', { class: 'now', cx: X(current.x), cy: Y(current.y), r: 5 },
        svg('title', {}, `current step: ${int(current.x)}`)));
  }
  const cursor = svg('g', { class: 'cursor' });
  chart.append(cursor);
  let at = -1;
  const show = (i) => {
    at = Math.max(0, Math.min(finite.length - 1, i));
    const p = finite[at];
    cursor.replaceChildren(svg('line', { x1: X(p.x), x2: X(p.x), y1: pad.t, y2: height - pad.b }),
      svg('circle', { cx: X(p.x), cy: Y(p.y), r: 4 }));
    readout.textContent = describe(p);
  };
  const nearest = (px) =>
    finite.reduce((best, p, i) => (Math.abs(X(p.x) - px) < Math.abs(X(finite[best].x) - px) ? i : best), 0);
  chart.addEventListener('pointermove', (e) => {
    const box = chart.getBoundingClientRect();
    show(nearest(((e.clientX - box.left) * width) / box.width));
  });
  chart.addEventListener('keydown', (e) => {
    const d = { ArrowRight: 1, ArrowLeft: -1, End: finite.length, Home: -finite.length }[e.key];
    if (d === undefined) return;
    e.preventDefault();
    show(at < 0 ? finite.findIndex((p) => p.x >= (current?.x ?? 0)) : at + d);
  });
  chart.addEventListener('focus', () => at < 0 && current && show(nearest(X(current.x))));
  return chart;
}
