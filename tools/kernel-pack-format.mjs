// SPDX-License-Identifier: Apache-2.0
// The kernel pack's encoding (docs/KERNELS.md, "Pack format"); the decoder is
// core/kernels/kernel_pack.cpp and must compute every prediction the same way: only
// IEEE double +, *, /, sqrt and floor, which JavaScript and C++ round identically.

export { Writer } from './byte-writer.mjs';

export const PACK_MAGIC = [0x53, 0x43, 0x4b, 0x32]; // "SCK2": SCK1 with a CRC-32 trailer

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** CRC-32 (IEEE 802.3, as zlib's) of `bytes`: the pack's integrity check. */
export function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** `body` with its CRC-32 appended, little-endian: the pack file. */
export function withChecksum(body) {
  const crc = crc32(body);
  return Buffer.concat([Buffer.from(body), Buffer.from([crc & 0xff, (crc >>> 8) & 0xff, (crc >>> 16) & 0xff,
    crc >>> 24])]);
}

// A latency of 3 significant digits is mant * 10^s, 100 <= mant <= 999; its code is
// (s + CODE_OFFSET) * 900 + mant - 100, monotone in the value, one step per last digit.
export const DIGITS = 3;
const LOW = 10 ** (DIGITS - 1);
const PER_DECADE = 9 * LOW;
const CODE_OFFSET = 8; // s >= -8: 1e-6 us
const S_MAX = 12;
const POW10 = Array.from({ length: 23 }, (_, i) => (i === 0 ? 1 : 0)).map((_, i) => {
  let p = 1;
  for (let k = 0; k < i; k += 1) p *= 10;
  return p;
});

/// "12.2" -> code; throws when the text does not carry exactly DIGITS significant digits.
export function codeOfText(text) {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new Error(`latency ${text} is not a plain decimal`);
  let digits = (m[1] + (m[2] || '')).replace(/^0+/, '');
  let s = -(m[2] || '').length;
  while (digits.length > DIGITS && digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    s += 1;
  }
  if (digits.length !== DIGITS) throw new Error(`latency ${text} does not have ${DIGITS} significant digits`);
  if (s < -CODE_OFFSET || s > S_MAX) throw new Error(`latency ${text} out of range`);
  return (s + CODE_OFFSET) * PER_DECADE + Number(digits) - LOW;
}

export function valueOfCode(code) {
  const s = Math.floor(code / PER_DECADE) - CODE_OFFSET;
  const mant = (code % PER_DECADE) + LOW;
  return s >= 0 ? mant * POW10[s] : mant / POW10[-s];
}

/// The code nearest a predicted value (clamped to the code range).
export function codeOfPrediction(p) {
  let s = S_MAX;
  while (s > -CODE_OFFSET && p < (s >= 0 ? LOW * POW10[s] : LOW / POW10[-s])) s -= 1;
  const scaled = s >= 0 ? p / POW10[s] : p * POW10[-s];
  const mant = Math.min(10 * LOW - 1, Math.max(LOW, Math.floor(scaled + 0.5)));
  return (s + CODE_OFFSET) * PER_DECADE + mant - LOW;
}

// The key columns as a trie: level d holds, per distinct key prefix of length d+1, its
// last value, its parent (index at level d-1) and (d < last) where its children start.
function buildTrie(keyRows, ncols) {
  const levels = Array.from({ length: ncols }, () => ({ value: [], parent: [], begin: [] }));
  keyRows.forEach((key, r) => {
    if (r > 0) {
      const prev = keyRows[r - 1];
      const i = key.findIndex((v, c) => v !== prev[c]);
      if (i < 0 || key[i] < prev[i]) throw new Error(`row ${r + 2}: keys not strictly increasing`);
    }
    let d = 0;
    if (r > 0) while (key[d] === keyRows[r - 1][d]) d += 1;
    for (; d < ncols; d += 1) {
      const L = levels[d];
      if (!Number.isSafeInteger(key[d]) ||
        key[d] < 0) throw new Error(`row ${r + 2}: key ${key[d]} not a whole number`);
      L.parent.push(d === 0 ? 0 : levels[d - 1].value.length - 1);
      L.value.push(key[d]);
      if (d < ncols - 1) L.begin.push(levels[d + 1].value.length);
    }
  });
  levels.forEach((L, d) => d < ncols - 1 && L.begin.push(levels[d + 1].value.length));
  return levels;
}

const childRange = (levels, d, node) =>
  d < 0 ? [0, levels[0].value.length] : [levels[d].begin[node], levels[d].begin[node + 1]];

function findChild(levels, d, node, v) {
  let [lo, hi] = childRange(levels, d, node);
  const values = levels[d + 1].value;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo < childRange(levels, d, node)[1] && values[lo] === v ? lo : -1;
}

/// The predicted code of leaf j (docs/KERNELS.md): the measured value scaled like its
/// neighbours along the last axis, in one or two planes, geometric mean of both.
export function predictCode(levels, values, codes, j, lastCode) {
  const L = levels.length - 1;
  const leaf = levels[L];
  const p = leaf.parent[j];
  const x = leaf.value[j];
  const hasPrev = j > childRange(levels, L - 1, p)[0];
  const b = hasPrev ? j - 1 : -1;
  const xPrev = hasPrev ? leaf.value[j - 1] : 0;
  let a = -1;
  let c = -1;
  let a2 = -1;
  let c2 = -1;
  if (L >= 1 && p > childRange(levels, L - 2, levels[L - 1].parent[p])[0]) {
    a = findChild(levels, L - 1, p - 1, x);
    if (hasPrev) c = findChild(levels, L - 1, p - 1, xPrev);
  }
  if (L >= 2) {
    const g = levels[L - 1].parent[p];
    if (g > childRange(levels, L - 3, levels[L - 2].parent[g])[0]) {
      const h = findChild(levels, L - 2, g - 1, levels[L - 1].value[p]);
      if (h >= 0) {
        a2 = findChild(levels, L - 1, h, x);
        if (hasPrev) c2 = findChild(levels, L - 1, h, xPrev);
      }
    }
  }
  const p1 = a >= 0 && b >= 0 && c >= 0 ? (values[a] * values[b]) / values[c] : 0;
  const p2 = a2 >= 0 && b >= 0 && c2 >= 0 ? (values[a2] * values[b]) / values[c2] : 0;
  if (p1 > 0 && p2 > 0) return codeOfPrediction(Math.sqrt(p1 * p2));
  if (p1 > 0) return codeOfPrediction(p1);
  if (p2 > 0) return codeOfPrediction(p2);
  if (b >= 0) return codes[b];
  if (a >= 0) return codes[a];
  if (a2 >= 0) return codes[a2];
  return lastCode;
}

/// Appends one table: header, key trie (each child list given once, or 0 = same as the
/// previous list at that level), then one zigzag residual per row, in row order.
export function encodePackTable(w, t) {
  const ncols = t.keys.length;
  w.byte(t.kind);
  w.byte(t.dtype);
  w.text(t.csv);
  w.varint(t.firstRow);
  w.varint(ncols);
  t.keys.forEach((k) => w.text(k));
  w.varint(t.keyRows.length);
  const levels = buildTrie(t.keyRows, ncols);
  const previous = Array(ncols).fill('');
  const emitList = (d, from, to) => {
    const list = levels[d].value.slice(from, to);
    const id = list.join(',');
    if (id === previous[d]) return w.varint(0);
    previous[d] = id;
    w.varint(list.length);
    list.reduce((prev, v) => (w.zigzag(v - prev), v), 0);
  };
  const walk = (d, node) => {
    const [from, to] = childRange(levels, d, node);
    emitList(d + 1, from, to);
    if (d + 1 < ncols - 1) for (let i = from; i < to; i += 1) walk(d + 1, i);
  };
  walk(-1, 0);
  const codes = t.latencies.map(codeOfText);
  const values = codes.map(valueOfCode);
  let last = 0;
  codes.forEach((code, j) => {
    w.zigzag(code - predictCode(levels, values, codes, j, last));
    last = code;
  });
}
