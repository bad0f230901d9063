// SPDX-License-Identifier: Apache-2.0
// Every table lookup of a priced step as the page lists it (web/results.js draws the table),
// with its provenance in plain words. No DOM: the pricing worker (web/pricing-worker.js) uses
// it too, to count the rows of a result too big to hand to the page whole and to write their CSV.
import { int, pct } from './dom.js';

const HOW = { exact: 'table cell', interpolated: 'interpolated', clamped: 'clamped', fallback: 'fallback',
  modelled: 'modelled' };
const AXIS = { m: 'M', seq: 'sequence', bs: 'batch', kv: 'KV' };
/** Never more lookup rows on screen (a step can have 65,536 lookups). */
export const MAX_SHOWN_LOOKUPS = 2000;

/** Plain words for a lookup's provenance: {how, detail}. */
export function provenance(lookup) {
  if (!lookup) return { how: '', detail: '' };
  const parts = [];
  if (lookup.table_pair) {
    const which = lookup.pair_exact ? 'measured shape' : lookup.pair_largest
      ? 'largest measured shape' : 'nearest covering shape';
    parts.push(`${which} (${lookup.table_pair.join(', ')})`);
  }
  if (lookup.table) parts.push(`table ${lookup.table}`);
  for (const key of Object.keys(lookup)) {
    const m = /^(\w+)_rows$/.exec(key);
    if (!m || !Array.isArray(lookup[key])) continue;
    const [a, b] = lookup[key];
    const name = AXIS[m[1]] || m[1];
    const t = lookup[`${m[1]}_rows_t`];
    const way = t === undefined ? '' : ` (${pct(t)} of the way)`;
    parts.push(a === b ? `${name} row ${int(a)}` : `${name} between rows ${int(a)} and ${int(b)}${way}`);
  }
  if (lookup.clamped_low) parts.push('below the measured range');
  if (lookup.clamped_high) parts.push('above the measured range');
  if (lookup.row !== undefined) parts.push(`data row ${lookup.row}`);
  return { how: HOW[lookup.how] || lookup.how || '', detail: parts.join('; ') };
}

/**
 * The lookup table of a result: `total` rows, of which the first `limit` are made (the
 * page shows a few hundred of a step's tens of thousands; making them all took longer
 * than the pricing). Each row: {where, shape, mfu, s, lookup, extra}.
 * @returns {{total: number, rows: any[]}}
 */
export function lookupTable(result, limit = Infinity) {
  const rows = [];
  let total = 0;
  /** `count` rows, the i-th made by make(i) while fewer than `limit` are made. */
  const add = (count, make) => {
    for (let i = 0; i < count && rows.length < limit; i++) rows.push(make(i));
    total += count;
  };
  const gemmRow = (where, g) =>
    ({ where: `${where} · ${g.kind} GEMM`, shape: `${int(g.m)}×${int(g.k)}×${int(g.n)}`, mfu: g.mfu,
    s: g.time_s, lookup: g.lookup, extra: g.floor_won ? 'weight-read floor won: priced at memory speed' : '' });
  const pre = result.phases?.prefill;
  for (const b of pre?.buckets || []) {
    const where = `Prefill bucket ${int(b.bucket)}`;
    add(1, () => ({ where: `${where} · attention`, shape: `${b.num_requests} req, ${int(b.total_new_tokens)} tok`,
      mfu: b.attn_mfu, s: b.attn_core_time_s, lookup: b.attn_lookup }));
    const gemms = b.gemms || [];
    add(gemms.length, (i) => gemmRow(where, gemms[i]));
  }
  const dec = result.phases?.decode;
  const attention = dec?.attn_lookups || [];
  add(attention.length, (i) => ({ where: `Decode · attention at KV ${int(attention[i].kv_len)}`,
    shape: `×${attention[i].count}`, mfu: attention[i].mfu, s: null, lookup: attention[i] }));
  const gemms = dec?.gemms || [];
  add(gemms.length, (i) => gemmRow('Decode', gemms[i]));
  // measured: every operator with the table cells it was read from (attention: one
  // lookup per request or KV length, as priced).
  const SCOPE = { layer: 'per layer', moe_layer: 'per MoE layer', dense_layer: 'per dense layer',
    step: 'once per step' };
  for (const op of result.measured?.operators || []) {
    const where = `${op.name} (${SCOPE[op.scope] || op.scope}${op.count > 1 ? ` ×${int(op.count)}` : ''})`;
    if (op.lookups?.length) {
      add(op.lookups.length, (i) => {
        const l = op.lookups[i];
        const cached = l.prefix ? ` after ${int(l.prefix)} cached` : '';
        return { where: `${where} · ${l.phase} length ${int(l.length)}${cached}`,
          shape: `batch ${int(l.batch)}${l.count > 1 ? ` ×${int(l.count)}` : ''}`, mfu: undefined,
          s: (l.time_us * (op.count || 1)) * 1e-6, lookup: { how: l.how }, extra: l.cells };
      });
      continue;
    }
    const shape = op.kind === 'gemm' ? `${int(op.rows)}×${int(op.k)}×${int(op.n)}` : `${int(op.rows)} rows`;
    add(1, () => ({ where, shape, mfu: undefined, s: op.time_us * 1e-6, lookup: { how: op.how },
      extra: op.cells || '' }));
  }
  return { total, rows };
}

/** The lookup table's values for CSV. */
export function lookupsCsv(result) {
  return { head: ['where', 'shape', 'mfu', 'time_us', 'how', 'provenance', 'note'],
    rows: lookupTable(result).rows.map((r) => {
      const p = provenance(r.lookup);
      return [r.where, r.shape, r.mfu ?? '', r.s === null ? '' : r.s * 1e6, p.how, p.detail, r.extra || ''];
    }) };
}

/**
 * `result` with every per-request list of lookups (a measured operator's `lookups`, the
 * decode phase's `attn_lookups`: one entry per request or KV length) cut to its first
 * `keep` entries, and the number of lookup rows of the whole result: what the page is sent
 * of a big step instead of up to 18 MB of rows it never shows (the lookup table's first
 * `keep` rows are the same in both). Returns {result, total}; a result with nothing to cut
 * is returned as it is.
 */
export function cutLookups(result, keep = MAX_SHOWN_LOOKUPS) {
  const total = lookupTable(result, 0).total;
  const long = (list) => Array.isArray(list) && list.length > keep;
  const decode = result.phases?.decode;
  const operators = result.measured?.operators;
  if (!long(decode?.attn_lookups) && !operators?.some((op) => long(op.lookups))) return { result, total };
  const out = { ...result };
  if (long(decode?.attn_lookups)) {
    out.phases = { ...result.phases, decode: { ...decode, attn_lookups: decode.attn_lookups.slice(0, keep) } };
  }
  if (operators) {
    out.measured = { ...result.measured,
      operators: operators.map((op) => (long(op.lookups) ? { ...op, lookups: op.lookups.slice(0, keep) } : op)) };
  }
  return { result: out, total };
}
