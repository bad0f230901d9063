// SPDX-License-Identifier: Apache-2.0
// The layer check (scripts/check-layers.mjs) finds an include that points up, and the
// core has none.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { layerViolations } from '../../scripts/check-layers.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('no include in core/ points to a higher layer', () => {
  assert.deepEqual(layerViolations(root), []);
});

test('an include that points up, and a file outside the layers, are named', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'layers-'));
  try {
    fs.mkdirSync(path.join(dir, 'core/model'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'core/serving'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'core/model/a.h'), '#include "base/error.h"\n#include "serving/memory.h"\n');
    fs.writeFileSync(path.join(dir, 'core/serving/memory.h'), '#include "model/a.h"\n#include <vector>\n');
    fs.writeFileSync(path.join(dir, 'core/stray.h'), '');
    const problems = layerViolations(dir);
    assert.equal(problems.length, 2, problems.join('\n'));
    assert.match(problems.find((p) => p.includes('a.h')), /core\/model\/a\.h:2: includes "serving\/memory\.h"/);
    assert.ok(problems.some((p) => p.startsWith('core/stray.h: not in a layer folder')));
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
});
