// Hand-written SVG charts: the step's time breakdown as stacked bars, and a line
// chart (log x) with the current step marked and a hover/keyboard readout.
import { h, svg, time, pct } from './dom.js';

const PHASES = { prefill: 'Prefill', decode: 'Decode' };
const MEMORY = { weights: 'weights read', kv_read: 'KV read', kv_write: 'KV write', activations: 'activations' };

/** Bars of the breakdown: [{label, total_s, binds, segments: [{key, name, s}]}]. */
export function breakdownRows(result) {
  const rows = [];
  for (const [phase, title] of Object.entries(PHASES)) {
    const p = result.phases?.[phase];
    if (!p) continue;
    const gemms = phase === 'prefill' ? (p.buckets || []).flatMap((b) => b.gemms || []) : p.gemms || [];
    const byKind = new Map();
    for (const g of gemms) byKind.set(g.kind, (byKind.get(g.kind) || 0) + g.time_s);
    const sum = [...byKind.values()].reduce((a, b) => a + b, 0);
    const scale = sum > 0 ? p.gemm_time_s / sum : 0;
    const compute = [...byKind].map(([kind, s]) => ({ key: kind, name: `${kind} GEMM`, s: s * scale }));
    compute.push({ key: 'attn', name: 'attention', s: p.attn_core_time_s });
    const rest = p.compute_s - compute.reduce((a, x) => a + x.s, 0);
    if (rest > p.compute_s * 1e-6) compute.push({ key: 'other', name: 'other compute', s: rest });
    const bytes = p.memory_bytes || {};
    const totalBytes = Object.values(bytes).reduce((a, b) => a + b, 0);
    const memory = Object.entries(bytes).map(([key, b]) => ({ key, name: MEMORY[key] || key, s: totalBytes ? (p.memory_s * b) / totalBytes : 0 }));
    const computeBound = p.bound_by === 'compute';
    rows.push({ label: `${title} compute`, total_s: p.compute_s, binds: computeBound, segments: compute });
    rows.push({ label: `${title} memory`, total_s: p.memory_s, binds: !computeBound, segments: memory });
    if (p.comm_s > 0) rows.push({ label: `${title} all-reduce (added)`, total_s: p.comm_s, binds: true, segments: [{ key: 'comm', name: 'all-reduce', s: p.comm_s }] });
  }
  const fused = result.corrected?.fused;
  if (fused) {
    for (const row of rows) row.binds = false;
    const fc = [{ key: 'gemm', name: 'GEMMs', s: fused.gemm_time_s }, { key: 'attn', name: 'attention', s: fused.attn_core_time_s }];
    rows.push({ label: 'Fused pass compute', total_s: fused.compute_s, binds: fused.compute_s >= fused.memory_s, segments: fc },
      { label: 'Fused pass memory', total_s: fused.memory_s, binds: fused.memory_s > fused.compute_s, segments: [{ key: 'memory', name: 'memory', s: fused.memory_s }] });
    if (fused.comm_s > 0) rows.push({ label: 'Fused all-reduce (added)', total_s: fused.comm_s, binds: true, segments: [{ key: 'comm', name: 'all-reduce', s: fused.comm_s }] });
  }
  const overhead_s = result.overhead_us * 1e-6;
  rows.push({ label: 'CPU overhead', total_s: overhead_s, binds: true, segments: [{ key: 'overhead', name: 'CPU overhead', s: overhead_s }] });
  const hardware_s = result.breakdown?.step_hardware_s ?? result.phases?.[result.bound]?.time_s ?? 0;
  const what = fused ? 'one fused forward pass' : PHASES[result.bound] ? `${PHASES[result.bound]} (binding phase)` : 'GPU time';
  rows.unshift({ label: 'Step', total_s: result.step_time_us * 1e-6, binds: true,
    segments: [{ key: 'step', name: what, s: hardware_s }, { key: 'overhead', name: 'CPU overhead', s: overhead_s }] });
  return rows;
}

/** The breakdown chart for `result`, `width` px wide, with a legend. */
export function breakdownChart(result, width) {
  const rows = breakdownRows(result);
  const max = Math.max(...rows.map((r) => Math.max(r.total_s, r.segments.reduce((a, s) => a + s.s, 0))), 1e-12);
  const rowH = 36;
  const chart = svg('svg', { class: 'breakdown', width, height: rows.length * rowH, viewBox: `0 0 ${width} ${rows.length * rowH}`,
    role: 'img', 'aria-label': rows.map((r) => `${r.label} ${time(r.total_s)}`).join(', ') });
  const seen = new Map();
  rows.forEach((row, i) => {
    const y = i * rowH;
    const dim = row.binds ? '' : ' idle';
    chart.append(svg('text', { x: 0, y: y + 12, class: `row-label${dim}` }, row.label + (row.binds ? '' : ' (not binding)')),
      svg('text', { x: width, y: y + 12, class: `row-value${dim}`, 'text-anchor': 'end' }, time(row.total_s)));
    let x = 0;
    for (const seg of row.segments) {
      const w = (seg.s / max) * width;
      seen.set(seg.key, seg.name.replace(/ \(.*\)$/, ''));
      if (w > 0) {
        chart.append(svg('rect', { x, y: y + 16, width: Math.max(w, 0.5), height: 14, class: `seg c-${/^[\w-]+$/.test(seg.key) ? seg.key : 'other'}${dim}` },
          svg('title', {}, `${row.label}: ${seg.name} ${time(seg.s)} (${pct(seg.s / (row.total_s || 1))})`)));
      }
      x += w;
    }
  });
  const legend = h('ul', { class: 'legend' }, [...seen].map(([key, name]) =>
    h('li', {}, h('span', { class: `swatch c-${/^[\w-]+$/.test(key) ? key : 'other'}` }), name)));
  return h('div', {}, chart, legend);
}

/** A line chart of points [{x, y, tick}] over log x; `readout` shows the hovered point. */
export function lineChart({ points, current, width, height = 170, label, describe, readout }) {
  const pad = { l: 52, r: 20, t: 10, b: 28 };
  const xs = points.map((p) => p.x).concat(current ? [current.x] : []).filter((x) => x > 0);
  const lo = Math.log(Math.min(...xs)), hi = Math.log(Math.max(...xs));
  const yMax = Math.max(...points.map((p) => p.y), current?.y || 0) * 1.08 || 1;
  const X = (x) => pad.l + ((Math.log(Math.max(x, Math.exp(lo))) - lo) / (hi - lo || 1)) * (width - pad.l - pad.r);
  const Y = (y) => pad.t + (1 - y / yMax) * (height - pad.t - pad.b);
  const chart = svg('svg', { class: 'line', width, height, viewBox: `0 0 ${width} ${height}`, tabindex: 0, role: 'img', 'aria-label': label });
  for (const f of [0, 0.5, 1]) {
    chart.append(svg('line', { x1: pad.l, x2: width - pad.r, y1: Y(yMax * f), y2: Y(yMax * f), class: 'grid' }),
      svg('text', { x: pad.l - 4, y: Y(yMax * f) + 4, 'text-anchor': 'end', class: 'tick' }, f ? time(yMax * f * 1e-6) : '0'));
  }
  const step = Math.max(1, Math.ceil(points.length / Math.max(2, Math.floor(width / 70))));
  points.forEach((p, i) => {
    if (i % step === 0) chart.append(svg('text', { x: X(p.x), y: height - 8, 'text-anchor': 'middle', class: 'tick' }, p.tick));
  });
  const good = points.filter((p) => Number.isFinite(p.y));
  chart.append(svg('path', { class: 'curve', d: good.map((p, i) => `${i ? 'L' : 'M'}${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`).join('') }));
  if (current) {
    chart.append(svg('line', { class: 'now-line', x1: X(current.x), x2: X(current.x), y1: pad.t, y2: height - pad.b }),
      svg('circle', { class: 'now', cx: X(current.x), cy: Y(current.y), r: 5 }, svg('title', {}, 'current step')));
  }
  const cursor = svg('g', { class: 'cursor' });
  chart.append(cursor);
  let at = -1;
  const show = (i) => {
    at = Math.max(0, Math.min(good.length - 1, i));
    const p = good[at];
    cursor.replaceChildren(svg('line', { x1: X(p.x), x2: X(p.x), y1: pad.t, y2: height - pad.b }),
      svg('circle', { cx: X(p.x), cy: Y(p.y), r: 4 }));
    readout.textContent = describe(p);
  };
  const nearest = (px) => good.reduce((best, p, i) => (Math.abs(X(p.x) - px) < Math.abs(X(good[best].x) - px) ? i : best), 0);
  chart.addEventListener('pointermove', (e) => {
    const box = chart.getBoundingClientRect();
    show(nearest(((e.clientX - box.left) * width) / box.width));
  });
  chart.addEventListener('keydown', (e) => {
    const d = { ArrowRight: 1, ArrowLeft: -1, End: good.length, Home: -good.length }[e.key];
    if (d === undefined) return;
    e.preventDefault();
    show(at < 0 ? good.findIndex((p) => p.x >= (current?.x ?? 0)) : at + d);
  });
  chart.addEventListener('focus', () => at < 0 && current && show(nearest(X(current.x))));
  return chart;
}
