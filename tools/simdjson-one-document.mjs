// SPDX-License-Identifier: Apache-2.0
// Build step of the Wasm modules: simdjson.cpp (Debian's source package, Apache-2.0) with
// the body of the document-stream parser (dom_parser_implementation::stage2_next, used only
// by parse_many/load_many) replaced by an error return. stepcalc parses one document per
// call and never a stream, but the parser's vtable keeps stage2_next alive, and its tape
// builder instantiated for streams is ~10 KB of Wasm (3.0 KB gzipped) in the first view.
// Any stream parse now fails with UNEXPECTED_ERROR instead of running.
// Usage: node tools/simdjson-one-document.mjs IN.cpp OUT.cpp
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const [input, out] = process.argv.slice(2);
if (!input || !out) throw new Error('usage: node tools/simdjson-one-document.mjs IN.cpp OUT.cpp');
const source = readFileSync(input, 'utf8');
const head = String.raw`(error_code dom_parser_implementation::stage2_next\(dom::document &_doc\) noexcept \{)`;
const body = String.raw`\n\s*return stage2::tape_builder::parse_document<true>\(\*this, _doc\);\n\}`;
const stub = '$1\n  (void)_doc;\n  return UNEXPECTED_ERROR;  // stepcalc parses no document streams\n}';
const replaced = source.replace(new RegExp(head + body, 'g'), stub);
if (replaced === source) {
  throw new Error(`${input}: no stage2_next body of the expected form (another simdjson version?); ` +
    'update tools/simdjson-one-document.mjs');
}
mkdirSync(path.dirname(out), { recursive: true });  // the first generated file of a fresh build tree
writeFileSync(out, replaced);
