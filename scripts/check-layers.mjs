// SPDX-License-Identifier: Apache-2.0
// The core's folders are layers, and an include may only point to its own layer or
// a lower one. Fails (exit 1) naming every include that points up, or any file of
// core/ outside a known layer. Run by scripts/test.sh.
import fs from 'node:fs';
import path from 'node:path';

/** Bottom to top; folders on one line share a layer. */
export const LAYERS = [
  ['base'],                    // errors, warnings, limits, enum tables
  ['json'],                    // JSON reader and writer, number and text formatting
  ['model'],                   // what a model is (ModelSpec) and the reference's shape of it
  ['request'],                 // the API input: model, GPU, layout, mode, step, workload, engine
  ['kernels', 'ops'],          // kernel tables (reference MFU tables, measured packs); operator list
  ['estimators'],              // step pricing: the reference path (estimators/reference/) and measured
  ['serving'],                 // memory and the scheduler simulation
  ['plan'],                    // search over serving
  ['io'],                      // domain <-> JSON
  ['api'],                     // entry points, pricing sessions, catalogue
];

const rank = new Map(LAYERS.flatMap((folders, i) => folders.map((f) => [f, i])));

/** Every include in `root`/core that points to a higher layer, as messages. */
export function layerViolations(root) {
  const core = path.join(root, 'core');
  const problems = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(h|cpp)$/.test(entry.name)) check(path.relative(core, full).split(path.sep).join('/'), full);
    }
  };
  const check = (rel, full) => {
    const layer = rel.split('/')[0];
    if (!rel.includes('/') || !rank.has(layer)) {
      problems.push(`core/${rel}: not in a layer folder (${[...rank.keys()].join(', ')})`);
      return;
    }
    const lines = fs.readFileSync(full, 'utf8').split('\n');
    lines.forEach((line, i) => {
      const m = /^\s*#\s*include\s+"([^"]+)"/.exec(line);
      if (!m || !m[1].includes('/')) return;
      const target = m[1].split('/')[0];
      if (!rank.has(target)) return;  // generated or vendor headers
      if (rank.get(target) > rank.get(layer)) {
        problems.push(`core/${rel}:${i + 1}: includes "${m[1]}" (${target}, above ${layer})`);
      }
    });
  };
  walk(core);
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
  const problems = layerViolations(root);
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error(`check-layers: ${problems.length} include(s) point up; layers bottom to top: ${
      LAYERS.map((l) => l.join('+')).join(' < ')}`);
    process.exit(1);
  }
  console.log(`check-layers: ok (${LAYERS.map((l) => l.join('+')).join(' < ')})`);
}
