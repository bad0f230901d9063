// SPDX-License-Identifier: Apache-2.0
// The bad-input catalogue (tests/data/bad-inputs.json) for the JavaScript test
// layers: entries with their generated input text (or bytes, for invalid UTF-8).
import { readFileSync } from 'node:fs';

export const CATALOGUE_PATH = new URL('../data/bad-inputs.json', import.meta.url);

/** Input bytes of an entry: its text, or its {parts: [...]} generator expanded. */
export function inputBytes(input) {
  if (typeof input === 'string') return Buffer.from(input, 'utf8');
  const chunks = input.parts.map((part) => {
    if (typeof part === 'string') return Buffer.from(part, 'utf8');
    if (part.hex !== undefined) return Buffer.from(part.hex, 'hex');
    if (part.repeat !== undefined) return Buffer.from(Array(part.count).fill(part.repeat).join(part.sep ?? ''), 'utf8');
    throw new Error(`unknown generator part ${JSON.stringify(part)}`);
  });
  return Buffer.concat(chunks);
}

/** Input of an entry as a JS string (entries with raw bytes are native-only). */
export function inputText(input) {
  return inputBytes(input).toString('utf8');
}

/** Catalogue entries that apply to `layer` ("core", "cli", "wasm" or "page"). */
export function entriesFor(layer) {
  const doc = JSON.parse(readFileSync(CATALOGUE_PATH, 'utf8'));
  return doc.entries.filter((e) => !e.layers || e.layers.includes(layer));
}
