// SPDX-License-Identifier: Apache-2.0
// Lines of at most 120 columns, as .clang-format sets for C++ and eslint.config.js for the
// JavaScript, in the sources ESLint does not read: the page's HTML and CSS and the TypeScript
// declarations and type tests. Prints each long line as file:line: columns and fails.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const MAX_COLUMNS = 120;
const root = join(import.meta.dirname, '..');
const filesIn = (dir, pattern) =>
  readdirSync(join(root, dir)).filter((name) => pattern.test(name)).map((name) => join(dir, name));
const files = [
  'index.html',
  ...filesIn('web', /\.(css|html)$/),
  ...filesIn('wasm', /\.d\.ts$/),
  ...filesIn('tests/types', /\.ts$/),
  ...filesIn('tests/web/fixtures', /\.html$/),
];

let long = 0;
for (const file of files) {
  readFileSync(join(root, file), 'utf8').split('\n').forEach((line, i) => {
    const columns = [...line].length;  // code points, as an editor counts them
    if (columns > MAX_COLUMNS) {
      console.log(`${file}:${i + 1}: ${columns} columns (at most ${MAX_COLUMNS})`);
      long++;
    }
  });
}
console.log(`line length: ${files.length} files, ${long} lines over ${MAX_COLUMNS} columns`);
process.exit(long === 0 ? 0 : 1);
