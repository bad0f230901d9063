// SPDX-License-Identifier: Apache-2.0
// A copy of the Wasm module whose memory may grow only to `maxPages` 64 KiB pages: with
// it, an input the core accepts runs out of memory inside the module and traps, the
// way a >2 GB call does on the real one, so the loader's trap handling can be tested
// without gigabytes of input.
import { readFileSync } from 'node:fs';

const WASM = new URL('../../wasm/dist/stepcalc-core.wasm', import.meta.url);
const MEMORY_SECTION = 5;

function readLeb(bytes, at) {
  let value = 0;
  let shift = 0;
  let i = at;
  for (;;) {
    const b = bytes[i++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (!(b & 0x80)) return { value, next: i };
  }
}

function leb(value) {
  const out = [];
  do {
    let b = value % 128;
    value = Math.floor(value / 128);
    if (value) b |= 0x80;
    out.push(b);
  } while (value);
  return out;
}

/** The module's bytes with the memory's maximum set to `maxPages`. */
export function smallMemoryModule(maxPages) {
  const bytes = readFileSync(WASM);
  for (let at = 8; at < bytes.length;) {
    const id = bytes[at];
    const size = readLeb(bytes, at + 1);
    const end = size.next + size.value;
    if (id === MEMORY_SECTION) {
      const count = readLeb(bytes, size.next);
      if (count.value !== 1) throw new Error('expected one memory');
      const min = readLeb(bytes, count.next + 1);
      const body = [...leb(1), 0x01, ...leb(min.value), ...leb(Math.max(maxPages, min.value))];
      return Buffer.concat([bytes.subarray(0, at), Buffer.from([MEMORY_SECTION, ...leb(body.length), ...body]),
        bytes.subarray(end)]);
    }
    at = end;
  }
  throw new Error('no memory section in the module');
}
