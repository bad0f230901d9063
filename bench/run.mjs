// SPDX-License-Identifier: Apache-2.0
// `npm run bench` (after scripts/install.sh and scripts/build.sh): builds and runs
// the native Google Benchmark program, builds the first-view Wasm module with the shipped
// per-part settings (build/wasm-shipped) and at one level -Oz, -Os, -O2 and -O3 (each in
// build/wasm-<opt>, never touching wasm/dist), times it under node, times the planner,
// measures the page in headless Chromium, and writes BENCHMARKS.md.
// Options: --quick (shorter runs, for trying the script), --no-page, --no-opt-levels (the
// shipped settings only).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { transformSync } from 'esbuild';
import { runWasm } from './wasm.mjs';
import { runPage } from './page.mjs';
import { writeReport } from './report.mjs';
import { nativeServing, runBoundNative, runServingWasm } from './serving.mjs';
import { runBoundPlans, runPlanBench } from './plan.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
const jobs = String(os.cpus().length || 2);
const OPT_LEVELS = ['-Oz', '-Os', '-O2', '-O3']; // each part of the first view at one level, for comparison
const started = Date.now();
const log = (message) => process.stderr.write(`bench [${((Date.now() - started) / 1000).toFixed(0)} s]: ${message}\n`);

function run(cmd, args, options = {}) {
  return execFileSync(cmd, args, { cwd: root, maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'pipe'], ...options })
    .toString();
}

function loadAverage() {
  return os.loadavg().map((x) => x.toFixed(2)).join(' ');
}

// ------------------------------------------------------------------ native
function nativeBenchmarks() {
  const dir = path.join(root, 'build/bench');
  log('native: configuring and building build/bench (Release, STEPCALC_BENCH=ON)');
  run('cmake', ['-S', '.', '-B', dir, '-DCMAKE_BUILD_TYPE=Release', '-DSTEPCALC_BENCH=ON']);
  run('cmake', ['--build', dir, '-j', jobs, '--target', 'stepcalc_bench']);
  const out = path.join(dir, 'native.json');
  log('native: running stepcalc_bench');
  run(path.join(dir, 'stepcalc_bench'), [
    `--benchmark_repetitions=${quick ? 3 : 10}`, `--benchmark_min_time=${quick ? 0.02 : 0.05}`,
    '--benchmark_report_aggregates_only=true', `--benchmark_out=${out}`, '--benchmark_out_format=json',
  ]);
  const data = JSON.parse(readFileSync(out, 'utf8'));
  const scale = { ns: 1, us: 1e3, ms: 1e6, s: 1e9 };
  const results = {};
  for (const b of data.benchmarks) {
    if (b.aggregate_name !== 'median') continue;
    results[b.run_name] = { cpu_ns: b.cpu_time * scale[b.time_unit], wall_ns: b.real_time * scale[b.time_unit] };
  }
  return { context: data.context, results };
}

// ------------------------------------------------------------------ wasm
function gzipSize(file) {
  return gzipSync(readFileSync(file), { level: 9 }).length;
}

/** The first view's per-part optimisation settings (CMakeLists.txt), as build/wasm was configured. */
const PARTS = ['STEPCALC_WASM_OPT', 'STEPCALC_WASM_PRICING_OPT', 'STEPCALC_WASM_HOT_OPT', 'STEPCALC_WASM_LINK_OPT'];

/** Builds a variant: `opt` one level for every part, or 'shipped' (build/wasm's settings). */
function wasmBuild(opt) {
  const dir = path.join(root, opt === 'shipped' ? 'build/wasm-shipped' : `build/wasm${opt}`);
  const dist = path.join(dir, 'dist');
  log(`wasm ${opt}: configuring and building ${path.relative(root, dir)}`);
  const env = { ...process.env, NODE_PATH: process.env.NODE_PATH || '/usr/share/nodejs' };
  const parts = opt === 'shipped'
    ? PARTS.map((p) => `-D${p}=${cmakeCacheValue('build/wasm', p) ?? ''}`)
    : [`-DSTEPCALC_WASM_OPT=${opt}`, ...PARTS.slice(1).map((p) => `-D${p}=`)];
  run('emcmake', ['cmake', '-S', '.', '-B', dir, '-DCMAKE_BUILD_TYPE=Release', '-DSTEPCALC_BENCH=ON',
    ...parts, `-DSTEPCALC_WASM_DIST=${dist}`], { env });
  run('cmake', ['--build', dir, '-j', jobs, '--target', 'stepcalc_wasm', 'stepcalc_bench_wasm'], { env });
  return { dir, dist, harness: path.join(dir, 'stepcalc_bench_wasm.cjs') };
}

function moduleSizes(dist) {
  const wasm = path.join(dist, 'stepcalc-core.wasm');
  const glue = path.join(dist, 'stepcalc-core.js');
  const loader = path.join(root, 'wasm/stepcalc.js');
  const s = {
    wasm_raw: readFileSync(wasm).length, wasm_gzip: gzipSize(wasm),
    glue_raw: readFileSync(glue).length, glue_gzip: gzipSize(glue),
    // The loader as the page ships it: minified into web/dist/app.js (tests/wasm/module.test.mjs).
    loader_raw: readFileSync(loader).length,
    loader_gzip: gzipSync(transformSync(readFileSync(loader, 'utf8'), { minify: true, format: 'esm' }).code,
      { level: 9 }).length,
  };
  s.total_gzip = s.wasm_gzip + s.glue_gzip + s.loader_gzip;
  return s;
}

function cmakeCacheValue(dir, name) {
  const cache = path.join(root, dir, 'CMakeCache.txt');
  if (!existsSync(cache)) return undefined;
  const line = readFileSync(cache, 'utf8').split('\n').find((l) => l.startsWith(`${name}:`));
  return line ? line.slice(line.indexOf('=') + 1) : undefined;
}

// ------------------------------------------------------------------ main
const report = {
  date: new Date().toISOString(),
  machine: {
    cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.cpus().length, memory_gib: (os.totalmem() / 2 ** 30).toFixed(1),
    os: `${os.type()} ${os.release()}`, node: process.version,
    compilers: {
      native: run('c++', ['--version']).split('\n')[0],
      emcc: run('emcc', ['--version'], { env: { ...process.env, NODE_PATH: '/usr/share/nodejs' } }).split('\n')[0],
    },
    load_before: loadAverage(),
  },
  git: (() => {
    try {
      return run('git', ['rev-parse', '--short', 'HEAD'])
        .trim() + (run('git', ['status', '--porcelain', '--untracked-files=no']).trim() ? ' (with local changes)' : '');
    } catch {
      return 'unknown';
    }
  })(),
  quick,
};

report.native = nativeBenchmarks();

/** The shipped settings in words: "pricing -O2, measured/serving -Oz -finline-functions, ...". */
const shippedOpt = () => {
  const v = Object.fromEntries(PARTS.map((p) => [p, (cmakeCacheValue('build/wasm', p) ?? '').replaceAll(';', ' ')]));
  return `pricing ${v.STEPCALC_WASM_PRICING_OPT || v.STEPCALC_WASM_OPT}, measured mode and serving ` +
    `${v.STEPCALC_WASM_HOT_OPT || v.STEPCALC_WASM_OPT}, the rest ${v.STEPCALC_WASM_OPT}, linked at ` +
    `${v.STEPCALC_WASM_LINK_OPT || v.STEPCALC_WASM_OPT}`;
};

report.shipped = {
  opt: shippedOpt(),
  lto: cmakeCacheValue('build/wasm', 'STEPCALC_WASM_LTO'),
  sizes: moduleSizes(path.join(root, 'wasm/dist')),
};

report.opt_levels = [];
const seconds = quick ? 0.15 : 0.5;
for (const opt of process.argv.includes('--no-opt-levels') ? ['shipped'] : ['shipped', ...OPT_LEVELS]) {
  const build = wasmBuild(opt);
  log(`wasm ${opt}: timing under node`);
  const timings = await runWasm({ dist: build.dist, harness: build.harness,
    seconds: opt === 'shipped' ? seconds : seconds / 2 });
  report.opt_levels.push({ opt, sizes: moduleSizes(build.dist), ...timings });
}

log('wasm: timing the shipped module through wasm/stepcalc.js');
// In a process of its own, as a page has one module: this one holds the builds timed above.
report.loader = JSON.parse(execFileSync(process.execPath, [path.join(root, 'bench/wasm.mjs'),
  '--seconds', String(seconds)], { cwd: root, maxBuffer: 1 << 26 }).toString());
log('serving: 1,000-request simulations through calc.serve');
report.serving = {
  date: report.date.slice(0, 10), load: loadAverage(),
  native: nativeServing(report.native.results), wasm: await runServingWasm({ repeats: quick ? 3 : 5 }),
  bound: runBoundNative(),
};

log('plan: the default search, natively and through calc.plan');
report.plan = { load: loadAverage(), ...await runPlanBench({ repeats: quick ? 1 : 3 }), bound: runBoundPlans() };

if (!process.argv.includes('--no-page')) {
  log('page: headless Chromium');
  try {
    report.page = await runPage({ repeats: quick ? 3 : 9 });
  } catch (error) {
    report.page = { measured: false, why: error.message.split('\n')[0] };
    log(`page: not measured: ${report.page.why}`);
  }
}
report.machine.load_after = loadAverage();
report.duration_s = Math.round((Date.now() - started) / 1000);

writeFileSync(path.join(root, 'build/bench/report.json'), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(path.join(root, 'BENCHMARKS.md'), writeReport(report));
log(`wrote BENCHMARKS.md (raw figures: build/bench/report.json) in ${report.duration_s} s`);
