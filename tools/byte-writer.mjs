// SPDX-License-Identifier: Apache-2.0
// The growing byte list both packers write their blobs with: the embedded tables
// (pack-tables.mjs, docs/TABLES.md) and the kernel packs (kernel-pack-format.mjs,
// docs/KERNELS.md). Their C++ readers decode these primitives the same way.

/** Bytes, varints (7 bits a byte, low first), zigzag integers, length-prefixed UTF-8. */
export class Writer {
  constructor() {
    /** @type {number[]} */
    this.bytes = [];
  }
  raw(list) {
    this.bytes.push(...list);
  }
  byte(b) {
    this.bytes.push(b & 0xff);
  }
  varint(v) {
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`varint out of range: ${v}`);
    while (v >= 0x80) {
      this.bytes.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.bytes.push(v);
  }
  zigzag(v) {
    this.varint(v >= 0 ? 2 * v : -2 * v - 1);
  }
  text(s) {
    const b = Buffer.from(s, 'utf8');
    this.varint(b.length);
    this.raw(b);
  }
  /** Each value as the zigzag of its difference from the one before (the first from 0). */
  deltas(values) {
    values.reduce((prev, v) => (this.zigzag(v - prev), v), 0);
  }
}
