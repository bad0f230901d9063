// SPDX-License-Identifier: Apache-2.0
// tools/docs-blocks.mjs: the repository's documents hold what their generators write; a
// changed figure, a block without a generator, a broken marker and a table row of the
// result contract removed are each named; --write puts the figures back. And every field
// docs/RESULT.md's hand-written tables name exists in a real result.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, docFiles, findBlocks, processFiles } from '../../tools/docs-blocks.mjs';
import { DocsContext } from '../../tools/docs-context.mjs';
import { fieldPaths, priceFields } from '../../tools/result-fields.mjs';

/** Runs `body` with a fresh temporary folder, removed afterwards. */
function inTempDir(body) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-blocks-'));
  try {
    return body(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** `text` with the first digit inside the block named `name` changed. */
function withChangedDigit(text, name) {
  const block = findBlocks(text).blocks.find((b) => b.name === name);
  assert.ok(block, `no block ${name}`);
  const at = block.content.search(/\d/);
  assert.ok(at >= 0, `block ${name} holds no digit`);
  const digit = String((Number(block.content[at]) + 1) % 10);
  return text.slice(0, block.start + at) + digit + text.slice(block.start + at + 1);
}

test('every block of README.md and docs/*.md is as its generator writes it', () => {
  const problems = processFiles(docFiles(ROOT));
  assert.deepEqual(problems.map((p) => `${p.file}:${p.line}: ${p.name} ${p.problem}`), []);
});

test('a changed figure is stale, named by file, line and block; --write puts it back', () => {
  const original = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  inTempDir((dir) => {
    const copy = path.join(dir, 'README.md');
    const changed = withChangedDigit(withChangedDigit(original, 'tour-first-view'), 'conformance-cases');
    fs.writeFileSync(copy, changed);
    const problems = processFiles([copy]);
    assert.deepEqual(problems.map((p) => [p.name, p.problem]).sort(),
      [['conformance-cases', 'is stale'], ['tour-first-view', 'is stale']]);
    const tour = problems.find((p) => p.name === 'tour-first-view');
    assert.equal(tour?.line, findBlocks(changed).blocks.find((b) => b.name === 'tour-first-view')?.line);
    assert.ok(tour?.file.endsWith('README.md'));

    const cli = spawnSync(process.execPath, [path.join(ROOT, 'tools/docs-blocks.mjs'), '--check', copy],
      { encoding: 'utf8' });
    assert.equal(cli.status, 1, cli.stdout + cli.stderr);
    assert.match(cli.stdout, /README\.md:\d+: block conformance-cases is stale/);
    assert.match(cli.stdout, /README\.md:\d+: block tour-first-view is stale/);

    assert.deepEqual(processFiles([copy], { write: true }), []);
    assert.equal(fs.readFileSync(copy, 'utf8'), original);
  });
});

test('a field dropped from the result contract fails until the list is regenerated', () => {
  const original = fs.readFileSync(path.join(ROOT, 'docs/RESULT.md'), 'utf8');
  const row = '| `phases.decode.attn_lookups[].kv_len` | number | blis-v2, corrected |\n';
  assert.ok(original.includes(row), 'docs/RESULT.md lists phases.decode.attn_lookups[].kv_len');
  inTempDir((dir) => {
    const copy = path.join(dir, 'RESULT.md');
    fs.writeFileSync(copy, original.replace(row, ''));
    assert.deepEqual(processFiles([copy]).map((p) => [p.name, p.problem]), [['result-fields', 'is stale']]);
  });
});

test('unknown generators and broken markers are named', () => {
  // The block's value as its generator writes it (only its placement is wrong here).
  const presetCount = fs.readdirSync(path.join(ROOT, 'presets/models')).filter((f) => f.endsWith('.json')).length;
  inTempDir((dir) => {
    const file = path.join(dir, 'doc.md');
    fs.writeFileSync(file, [
      'A figure: <!-- generated:no-such-figure -->7<!-- /generated:no-such-figure -->.',
      `<!-- generated:preset-count -->${presetCount}<!-- /generated:preset-count --> presets, a paragraph cut short.`,
      'An open block <!-- generated:gpu-names -->A100',
      'and a close that opens nothing <!-- /generated:kernel-gpus -->.',
    ].join('\n'));
    const problems = processFiles([file]).map((p) => `${p.line} ${p.name} ${p.problem.split(/[:,]/)[0]}`);
    assert.deepEqual(problems, [
      '1 no-such-figure has no generator (tools/docs-blocks.mjs --list)',
      '2 preset-count is a one-line block at the start of a line',
      '3 gpu-names is not closed',
      '4 kernel-gpus closes a block that is not open',
    ]);
  });
});

/**
 * The fields named in the first column of docs/RESULT.md's hand-written tables that no real
 * result has. A table's fields are relative to its section: the headline's to the result,
 * `phases`' to either phase, `measured`'s to `measured`.
 */
function undocumentedFields(markdown, paths) {
  const handWritten = markdown.replace(/<!-- generated:([a-z0-9-]+) -->[\s\S]*?<!-- \/generated:\1 -->/g, '');
  const missing = [];
  for (const section of handWritten.split(/\n(?=## )/)) {
    const prefix = /^## `(\w+)`/.exec(section)?.[1];
    const rows = section.split('\n').filter((l) => /^\| `/.test(l));
    for (const row of rows) {
      for (const [, name] of row.split('|')[1].matchAll(/`([^`]+)`/g)) {
        const candidates = !prefix ? [name]
          : prefix === 'phases' ? [`phases.prefill.${name}`, `phases.decode.${name}`] : [`${prefix}.${name}`];
        if (!candidates.some((c) => paths.has(c))) missing.push(candidates.join(' or '));
      }
    }
  }
  return missing;
}

test('every field docs/RESULT.md describes by hand exists in a real result', () => {
  const paths = new Set(fieldPaths(priceFields(new DocsContext(ROOT), 'full').tree).map(([p]) => p));
  const doc = fs.readFileSync(path.join(ROOT, 'docs/RESULT.md'), 'utf8');
  assert.ok(doc.includes('| `step_time_us` |') && doc.includes('| `operators[]` |'));
  assert.deepEqual(undocumentedFields(doc, paths), []);
  const invented = doc.replace('| `step_time_ms` |', '| `step_time_s`, `step_time_ms` |')
    .replace('| `gpu_time_us`, `cpu_time_us` |', '| `gpu_time_us`, `gpu_us` |');
  assert.deepEqual(undocumentedFields(invented, paths), ['step_time_s', 'measured.gpu_us']);
});

test('the kernel-version verdict ranks only GPUs with measured runs; one without is said, not ranked', async () => {
  const { facts } = await import('../../tools/docs-facts.mjs');
  const v = (version, ttft, tpot) => ({ version, ttft_mape: ttft, tpot_mape: tpot });
  const ctx = { readJson: () => ({ gpus: [
    { gpu: 'H100', versions: [v('vllm-0.14.0', 50, 18), v('vllm-0.24.0', 40, 17)] },
    { gpu: 'H100-PCIe', versions: [v('vllm-0.14.0', null, null), v('vllm-0.24.0', null, null)] },
  ] }) };
  assert.equal(facts['kernel-version-verdict'](ctx), 'TTFT is closer with 0.24.0 on H100; TPOT is closer with ' +
    '0.24.0 on H100 (no measured runs on H100-PCIe)');
});
