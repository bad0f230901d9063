// SPDX-License-Identifier: Apache-2.0
// Wasm-in-Node benchmarks. Two views, like the native ones:
//   core   the C++ harness bench/bench_wasm.cpp compiled to Wasm: price_step (pricing
//          alone), price_json (JSON in/out inside Wasm) and the sweeps, timed in Wasm
//   api    the JavaScript API a page calls: calc.price(object) = JSON.stringify +
//          Embind call + JSON.parse, and calc.sweep(...) for the 1,000-point sweeps
// Usage: node bench/wasm.mjs [--dist DIR] [--harness FILE.cjs] [--seconds S]
//   --dist     a wasm/dist-like directory (default: the shipped module via the loader)
//   --harness  the compiled bench/bench_wasm.cpp (skipped when absent)
// Prints one JSON object: {core: [...], api: [...]}, per-call medians in ns (cpu_ns,
// wall_ns).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const conformance = path.join(root, 'tests/data/conformance-cases.json');

/** The bench cases (the same selection as bench/bench_cases.h). */
export function benchCases() {
  const all = JSON.parse(readFileSync(conformance, 'utf8'));
  return ['bench:a', 'bench:b', 'bench:c'].map((tag) => {
    const found = all.find((c) => (c.tags || []).includes(tag));
    if (!found) throw new Error(`conformance file lacks ${tag}`);
    return { tag, request: found };
  });
}

const ramp = (start, step, n = 1000) => Array.from({ length: n }, (_, i) => start + step * i);
/** The sweeps of bench/bench_cases.h. */
export const SWEEPS = [
  { name: 'sweep_a_decode_kv', tag: 'bench:a', axis: 'decode_kv', values: ramp(16, 16) },
  { name: 'sweep_b_prefill_tokens', tag: 'bench:b', axis: 'prefill_tokens', values: ramp(16, 16) },
];

/** Process CPU time in ms (user + system). */
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/**
 * Median per-call time (ns) of `body`, in batches of ~10 ms over `seconds`: CPU time
 * of the process (robust on a shared machine) and wall time.
 */
export function time(body, seconds) {
  for (const end = performance.now() + 100; performance.now() < end;) body(); // tier-up
  let batch = 1;
  for (;;) {
    const start = performance.now();
    for (let i = 0; i < batch; i++) body();
    if (performance.now() - start > 10 || batch >= 1 << 30) break;
    batch *= 2;
  }
  const cpu = [];
  const wall = [];
  const end = performance.now() + seconds * 1000;
  while (cpu.length < 5 || (performance.now() < end && cpu.length < 1000)) {
    const c0 = cpuMs();
    const w0 = performance.now();
    for (let i = 0; i < batch; i++) body();
    wall.push(((performance.now() - w0) * 1e6) / batch);
    cpu.push(((cpuMs() - c0) * 1e6) / batch);
  }
  return { cpu_ns: median(cpu), wall_ns: median(wall), batches: cpu.length, iterations: cpu.length * batch };
}

export function median(values) {
  const v = [...values].sort((a, b) => a - b);
  const n = v.length;
  return n % 2 ? v[n >> 1] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/** The API object for a dist directory, wrapped as wasm/stepcalc.js wraps it. */
async function apiFor(dist) {
  if (!dist) return (await import(pathToFileURL(path.join(root, 'wasm/stepcalc.js')).href)).load();
  const { default: create } = await import(pathToFileURL(path.join(path.resolve(dist), 'stepcalc-core.js')).href);
  const core = await create({ wasmBinary: readFileSync(path.join(dist, 'stepcalc-core.wasm')) });
  const unwrap = (o) => {
    if (!o.ok) throw new Error(`${o.code} ${o.path}: ${o.message}`);
    return JSON.parse(new TextDecoder().decode(o.json)); // a view of the JSON in module memory
  };
  return {
    price: (request) => unwrap(core.price(typeof request === 'string' ? request : JSON.stringify(request))),
    sweep: (request, axis, values) => unwrap(core.sweep(JSON.stringify(request), axis, values)),
  };
}

export async function runWasm({ dist, harness, seconds = 0.5 } = {}) {
  const out = { core: [], api: [] };
  if (harness) {
    const text = execFileSync(process.execPath, [harness, conformance, String(seconds)], {
      maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'inherit'],
    }).toString();
    out.core = JSON.parse(text).results;
  }
  const calc = await apiFor(dist);
  const cases = benchCases();
  let sink = 0;
  for (const { tag, request } of cases) {
    out.api.push({ name: `price/${tag}`, ...time(() => { sink += calc.price(request).step_time_us; }, seconds) });
  }
  for (const s of SWEEPS) {
    const request = cases.find((c) => c.tag === s.tag).request;
    out.api.push({ name: s.name, ...time(() => { sink += calc.sweep(request, s.axis, s.values).length; }, seconds) });
  }
  if (calc.sweepColumns) {
    // Issue 15: the request as a user sends it (the case without its test metadata).
    const plain = ({ expected, tags, ...request }) => request;
    out.api.push({ name: 'blank/version', ...time(() => { sink += calc.version().length; }, seconds) });
    for (const { tag, request } of cases) {
      const r = plain(request);
      out.api.push({ name: `summary/${tag}`,
        ...time(() => { sink += calc.price(r, { detail: 'summary' }).step_time_us; }, seconds) });
      out.api.push({ name: `full/${tag}`,
        ...time(() => { sink += calc.price(r, { detail: 'full' }).step_time_us; }, seconds) });
      // A large result's attention lookups are parsed when first read: the call and that read.
      out.api.push({ name: `full-read/${tag}`,
        ...time(() => { sink += calc.price(r, { detail: 'full' }).phases.decode?.attn_lookups.length ?? 0; },
          seconds) });
    }
    for (const s of SWEEPS) {
      const request = plain(cases.find((c) => c.tag === s.tag).request);
      out.api.push({ name: `columns/${s.name}`,
        ...time(() => { sink += calc.sweepColumns(request, s.axis, s.values).length; }, seconds) });
    }
    const a = plain(cases[0].request);
    const x = { axis: 'decode_kv', values: Array.from({ length: 100 }, (_, i) => 128 + 160 * i) };
    const y = { axis: 'decode_batch', values: Array.from({ length: 100 }, (_, i) => 1 + i) };
    out.api.push({ name: 'sweep2d_100x100', ...time(() => { sink += calc.sweep2d(a, x, y).length; }, seconds) });
  }
  if (sink === 0) throw new Error('benchmarks priced nothing');
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const result = await runWasm({
    dist: arg('--dist'), harness: arg('--harness'), seconds: Number(arg('--seconds') ?? 0.5),
  });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
