// SPDX-License-Identifier: Apache-2.0
// How the accuracy ledger reads a measured run's row (tools/validate-ledger.mjs requestOf,
// layoutOf): the layout as vLLM ran it, and a reason instead of a guess for what stepcalc does
// not simulate. Made-up rows in the CSV's columns; and a CSV of one's own runs validated
// (tools/validate.mjs --data --out).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CHAT_TEMPLATE_TOKENS, clientsOfBatch, layoutOf, parseCsv, priceRows, readRows, repeats, requestOf, staleRequests,
  subsetOf,
} from '../../tools/validate-ledger.mjs';

/** A Qwen3-235B-A22B-FP8 row on H200 with the given columns changed. */
const row = (columns) => ({
  id: 'made-up', backend: 'vllm', backend_version: '0.12.0', model_path: 'Qwen/Qwen3-235B-A22B-FP8',
  system: 'h200_sxm', precision: 'fp8', mode: 'agg', isl: '1000', osl: '100', gemm_quant_mode: 'fp8',
  moe_quant_mode: 'fp8', tp_size: '2', pp_size: '1', attention_dp_size: '1', moe_tp_size: '2', moe_ep_size: '1',
  concurrency: '8', silicon_ttft_ms: '300', silicon_tpot_ms: '30', ...columns,
});

test('a row\'s layout: tp, ep and dp as written, or dp from the MoE\'s GPUs where attention_dp_size is empty', () => {
  assert.deepEqual(layoutOf(row({})), { tp: 2, ep: 1, dp: 1 });
  assert.deepEqual(layoutOf(row({ tp_size: '2', attention_dp_size: '2', moe_tp_size: '1', moe_ep_size: '4' })),
    { tp: 2, ep: 4, dp: 2 });
  // tp x attention-DP = moe_tp x moe_ep: tp 1 with the experts sliced over 2 or 4 GPUs ran 2 or 4 ranks.
  assert.deepEqual(layoutOf(row({ tp_size: '1', attention_dp_size: '', moe_tp_size: '2' })), { tp: 1, ep: 1, dp: 2 });
  assert.deepEqual(layoutOf(row({ tp_size: '2', attention_dp_size: '', moe_tp_size: '4' })), { tp: 2, ep: 1, dp: 2 });
  assert.deepEqual(layoutOf(row({ tp_size: '2', attention_dp_size: '', moe_tp_size: '1', moe_ep_size: '2' })),
    { tp: 2, ep: 2, dp: 1 });
  // A dense model's empty MoE columns: one engine.
  assert.deepEqual(layoutOf(row({ tp_size: '4', attention_dp_size: '', moe_tp_size: '', moe_ep_size: '' })),
    { tp: 4, ep: 1, dp: 1 });
  assert.match(subsetOf(row({ tp_size: '1', attention_dp_size: '', moe_tp_size: '4' })), /\| TP1 DP4$/);
  // Every GPU stepcalc has a preset for, by its AIConfigurator system name.
  for (const [system, gpu] of [['b300_sxm', 'B300'], ['gb200', 'GB200'], ['rtx_pro_6000_server', 'RTX-PRO-6000'],
    ['a100_sxm', 'A100'], ['h100_sxm', 'H100']]) {
    const onIt = requestOf(row({ system }));
    assert.ok('request' in onIt, system);
    assert.equal(onIt.request.gpu, gpu);
    assert.match(subsetOf(row({ system })), new RegExp(`\\| ${gpu} \\|`));
  }
  const mapped = requestOf(row({ tp_size: '1', attention_dp_size: '', moe_tp_size: '2' }));
  assert.ok('request' in mapped, JSON.stringify(mapped));
  assert.deepEqual([mapped.request.tp, mapped.request.ep, mapped.request.dp], [1, 1, 2]);
});

test('what the core does not simulate is a reason naming the column, never priced as something else', () => {
  const reason = (columns) => {
    const mapped = requestOf(row(columns));
    assert.ok('reason' in mapped, `priced: ${JSON.stringify(columns)}`);
    return mapped.reason;
  };
  assert.match(reason({ pp_size: '2' }), /^pp_size 2: pipeline parallelism/);
  assert.match(reason({ backend: 'sglang' }), /^backend sglang:/);
  assert.match(reason({ moe_quant_mode: 'nvfp4' }), /^moe_quant_mode nvfp4 differs from gemm_quant_mode fp8/);
  assert.match(reason({ mode: 'disagg' }), /^mode disagg: disaggregated/);
  assert.match(reason({ mode: 'aggregated' }), /^mode aggregated: neither agg \(one engine\) nor disagg$/);
  // A CSV without the mode column, or an empty cell: one engine, as the source's agg.
  for (const mode of ['', undefined]) {
    const mapped = requestOf(row({ mode }));
    assert.ok('request' in mapped, `mode ${mode}`);
    assert.equal(subsetOf(row({ mode })), subsetOf(row({})));
  }
  assert.match(reason({ system: 'mi300x' }), /^system mi300x/);
  // The system by AIConfigurator's name or stepcalc's, in any case.
  for (const system of ['h200_sxm', 'H200_SXM', 'H200', ' h200 '])
    assert.equal(requestOf(row({ system })).request.gpu, 'H200', system);
  assert.match(reason({ gemm_quant_mode: 'int8_sq', moe_quant_mode: 'int8_sq' }), /^gemm_quant_mode int8_sq has no/);
  // The block-scaled FP8 label is the fp8 request (the checkpoint's weight_block_size picks the kernel).
  assert.ok('request' in requestOf(row({ gemm_quant_mode: 'fp8', moe_quant_mode: 'fp8_block' })));
  const block = requestOf(row({ gemm_quant_mode: 'fp8_block', moe_quant_mode: 'fp8_block' }));
  assert.ok('request' in block);
  assert.equal(block.request.quantization, 'fp8');
  // ... and reads the same checkpoint as the fp8 label (NVIDIA's FP8 Llama-3.1-70B, say).
  const llama = (mode) => requestOf(row({ model_path: 'meta-llama/Llama-3.1-70B', gemm_quant_mode: mode,
    moe_quant_mode: mode, moe_tp_size: '', moe_ep_size: '' }));
  assert.equal(llama('fp8_block').model_file, llama('fp8').model_file);
  assert.match(String(llama('fp8').model_file), /FP8/);
  // The prompt as the engine prefills it: isl tokens in a chat template of one user message.
  assert.equal(requestOf(row({ isl: '1024' })).request.workload.input_tokens, 1024 + CHAT_TEMPLATE_TOKENS);
  assert.equal(CHAT_TEMPLATE_TOKENS, 8);
  // Lengths and clients are whole numbers of at least 1, named by their column (an empty isl was an 8-token prompt).
  for (const [column, value] of [['isl', ''], ['osl', 'x'], ['concurrency', '2.5'], ['isl', '0']])
    assert.equal(reason({ [column]: value }), `${column} ${JSON.stringify(value)}: not a whole number of at least 1`);
  // A run measured nothing to compare with: no guess, its reason.
  for (const [column, value] of [['silicon_ttft_ms', ''], ['silicon_tpot_ms', '0'], ['silicon_tpot_ms', 'n/a']])
    assert.equal(reason({ [column]: value }), `${column} ${JSON.stringify(value)}: no measured time to compare with`);
  // Llama-3.1-8B's config ships with the source's (no public run is of it): its HF id finds it.
  const dense = { moe_tp_size: '', moe_ep_size: '', attention_dp_size: '', gemm_quant_mode: '', moe_quant_mode: '' };
  for (const id of ['meta-llama/Llama-3.1-8B', 'meta-llama/Meta-Llama-3.1-8B'])
    assert.equal(requestOf(row({ ...dense, model_path: id })).model_file, 'meta-llama--Meta-Llama-3.1-8B_config.json');
  // 16-bit GEMMs beside quantised experts, as a checkpoint that quantises only its experts runs:
  // the same request as the rows labelled with one format, when the checkpoint's config says so.
  const gptoss = { model_path: 'openai/gpt-oss-120b', precision: 'fp4', gemm_quant_mode: 'nvfp4',
    moe_quant_mode: 'nvfp4' };
  const kimi = { model_path: 'moonshotai/Kimi-K2.5', precision: 'int4', gemm_quant_mode: 'int4_wo',
    moe_quant_mode: 'int4_wo', tp_size: '8', moe_tp_size: '8' };
  for (const [model, experts] of [[gptoss, 'w4a16_mxfp4'], [gptoss, 'nvfp4'], [kimi, 'int4_wo']]) {
    const split = row({ ...model, gemm_quant_mode: 'float16', moe_quant_mode: experts });
    assert.deepEqual(requestOf(split), requestOf(row(model)));
    assert.equal(subsetOf(split), subsetOf(row(model)).replace('nvfp4', experts));
  }
  // gpt-oss's MXFP4 under both of AIConfigurator's names (nvfp4 for the checkpoint, w4a16_mxfp4 for its
  // Hopper experts) is one request; the same two labels on a checkpoint of another format are not.
  for (const [gemm, moe] of [['nvfp4', 'w4a16_mxfp4'], ['mxfp4', 'nvfp4']])
    assert.deepEqual(requestOf(row({ ...gptoss, gemm_quant_mode: gemm, moe_quant_mode: moe })), requestOf(row(gptoss)));
  assert.match(reason({ ...kimi, precision: 'fp4', gemm_quant_mode: 'nvfp4', moe_quant_mode: 'w4a16_mxfp4' }),
    /^moe_quant_mode w4a16_mxfp4 differs from gemm_quant_mode nvfp4/);
  // ... not when the checkpoint quantises in another format, nor beside quantised GEMMs.
  assert.match(reason({ ...kimi, gemm_quant_mode: 'float16', moe_quant_mode: 'nvfp4' }),
    /^moe_quant_mode nvfp4 differs from gemm_quant_mode float16/);
  assert.match(reason({ ...gptoss, gemm_quant_mode: '', moe_quant_mode: 'w4a8_mxfp4_mxfp8' }),
    /^moe_quant_mode w4a8_mxfp4_mxfp8 differs from gemm_quant_mode \(none\)/);
  // The ledger's own rows: pp_size 1, vLLM, one quantization (or none for a dense BF16 model).
  assert.ok('request' in requestOf(row({})));
  assert.ok('request' in requestOf(row({ pp_size: '', backend: '' })));
});

test('a CSV of one\'s own runs may say how they were measured: its own protocol columns override the protocol', () => {
  const base = requestOf(row({})).request;
  const own = requestOf(row({ measured_requests: '40', warmup_requests: '0', endpoint_type: 'completions',
    kv_cache_dtype: 'auto', max_num_seqs: '128', max_num_batched_tokens: '2048', gpu_memory_utilization: '0.85' }));
  assert.ok('request' in own, own.reason);
  const q = own.request;
  assert.deepEqual(q.workload, { ...base.workload, input_tokens: 1000, num_requests: 40, warmup_requests: 0 });
  assert.equal(q.kv_cache_dtype, 'auto');
  assert.deepEqual(q.engine, { max_num_seqs: 128, max_num_batched_tokens: 2048, gpu_memory_utilization: 0.85 });
  // Empty cells (or no such columns) leave the protocol's choices; only the warm-up given: 10 x clients measured.
  assert.deepEqual(requestOf(row({ measured_requests: '', endpoint_type: ' ', max_num_seqs: '' })).request, base);
  assert.equal(requestOf(row({ warmup_requests: '4' })).request.workload.num_requests, 4 + 80);
  assert.equal(requestOf(row({ endpoint_type: 'chat' })).request.workload.input_tokens, 1000 + CHAT_TEMPLATE_TOKENS);
  const reason = (columns) => requestOf(row(columns)).reason;
  assert.equal(reason({ max_num_seqs: '0' }), 'max_num_seqs "0": not a whole number of at least 1');
  assert.equal(reason({ measured_requests: '2.5' }), 'measured_requests "2.5": not a whole number of at least 1');
  assert.equal(reason({ warmup_requests: '-1' }), 'warmup_requests "-1": not a whole number of at least 0');
  assert.equal(reason({ gpu_memory_utilization: '1.2' }), 'gpu_memory_utilization "1.2": not a fraction in (0, 1]');
  assert.equal(reason({ endpoint_type: 'embeddings' }), 'endpoint_type "embeddings": not chat or completions');
  // Priced as the core prices such a request: a lower max_num_seqs than the clients queues them.
  const capped = priceRows([row({ id: 'own-capped', max_num_seqs: '2', measured_requests: '16' }),
    row({ id: 'own', measured_requests: '16' })]);
  assert.deepEqual(capped.map((r) => r.status), ['priced', 'priced']);
  assert.ok(capped[0].ttft_ms > capped[1].ttft_ms, `${capped[0].ttft_ms} <= ${capped[1].ttft_ms}`);
  // A kv_cache_dtype the core does not know is its error, named.
  const unknown = priceRows([row({ id: 'own-kv', kv_cache_dtype: 'fp3', measured_requests: '16' })])[0];
  assert.equal(unknown.status, 'unsupported');
  assert.match(String(unknown.reason), /kv_cache_dtype/);
  // The written protocol says which rows chose their own.
  const dir = mkdtempSync(join(tmpdir(), 'stepcalc-own-'));
  const columns = ['id', 'model_path', 'system', 'mode', 'precision', 'gemm_quant_mode', 'moe_quant_mode', 'tp_size',
    'moe_tp_size', 'isl', 'osl', 'concurrency', 'silicon_ttft_ms', 'silicon_tpot_ms', 'max_num_seqs', 'endpoint_type'];
  const line = (id, cap, more = {}) => columns.map((c) => ({ ...row({ id }), max_num_seqs: cap, endpoint_type: '',
    ...more })[c]).join(',');
  writeFileSync(join(dir, 'own.csv'), [columns.join(','), line('a', '2'), line('b', ''),
    line('c', '', { isl: '2050', endpoint_type: 'completions' })].join('\n'));
  const r = spawnSync(process.execPath, [fileURLToPath(new URL('../../tools/validate.mjs', import.meta.url)),
    '--data', join(dir, 'own.csv'), '--out', join(dir, 'out')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const written = JSON.parse(readFileSync(join(dir, 'out', 'validation.json'), 'utf8'));
  assert.match(written.protocol.own_columns, /^the CSV's own endpoint_type \(1 row\), max_num_seqs \(1 row\) override/);
  assert.deepEqual(written.runs.map((x) => x.request.engine), [{ max_num_seqs: 2 }, undefined, undefined]);
  // By load by the row's isl: 2,050 tokens sent as they are (completions) are over 2,048, not 2,042.
  assert.deepEqual(written.by_load.map((b) => [b.prompt, b.priced]), [['up to 2,048', 2], ['over 2,048', 1]]);
  assert.match(readFileSync(join(dir, 'out', 'VALIDATION.md'), 'utf8'), /- own columns: the CSV's own endpoint_type/);
  // One's own runs are held to the same targets; the step-level bar is the repository's calibration, not theirs.
  assert.deepEqual(written.targets.bars.map((b) => b.what.split(' ')[0]), ['runs', 'TTFT', 'TPOT', 'subsets']);
  assert.equal(written.targets.bars[0].now, 100);
  assert.match(readFileSync(join(dir, 'out', 'VALIDATION.md'), 'utf8'), /## Against the targets\n/);
  rmSync(dir, { recursive: true, force: true });
});

test('docs/SERVING.md\'s example CSV of one\'s own runs maps to the requests it describes', () => {
  const doc = readFileSync(new URL('../../docs/SERVING.md', import.meta.url), 'utf8');
  const block = /```csv\n([^]*?)```/.exec(doc);
  assert.ok(block, 'no csv block');
  const [head, ...records] = parseCsv(block[1].replace(/TTFT_MS/g, '100').replace(/TPOT_MS/g, '10'), 'SERVING.md');
  const mapped = records.map((r) => requestOf(Object.fromEntries(r.map((v, i) => [head[i], v]))));
  for (const m of mapped) assert.ok('request' in m, m.reason);
  const [first, second] = mapped.map((m) => m.request);
  assert.equal(first.model, 'llama-3.1-8b-instruct');
  assert.equal(first.gpu, 'H100');
  assert.deepEqual([first.tp, first.workload.concurrency, first.workload.num_requests], [1, 8, 96]);
  assert.equal(second.model, 'qwen3-32b');
  assert.deepEqual([second.tp, second.workload.num_requests, second.workload.warmup_requests], [2, 72, 8]);
  assert.deepEqual(second.engine, { max_num_seqs: 32 });
});

test('npm run validate -- --data RUNS.csv --out DIR: your own runs, in the public CSV\'s columns', () => {
  const [head, ...lines] = readFileSync(new URL('../../data/silicon/vllm-public.csv', import.meta.url), 'utf8')
    .trim().split('\n');
  const names = head.split(',');
  const at = (name) => names.indexOf(name);
  // A cheap public run: Llama-3.1-70B FP8 on B200, TP 8, 4 clients, 1,024 + 1,024 tokens.
  const line = lines.find((l) => /llama_3_1_70b_b200_sxm_vllm_fp8_agg_1024x1024_c4_tp8/.test(l));
  assert.ok(line);
  // The source's columns: without the added `concurrency` (derived again from silicon_data_source).
  const keep = names.map((_, i) => i).filter((i) => i !== at('concurrency'));
  const cells = (edit) => {
    const c = line.split(',');
    edit(c);
    return keep.map((i) => c[i]).join(',');
  };
  const dir = mkdtempSync(join(tmpdir(), 'stepcalc-validate-'));
  const csv = join(dir, 'runs.csv');
  writeFileSync(csv, [keep.map((i) => names[i]).join(','),
    cells((c) => { c[at('id')] = 'mine-b200'; }),
    cells((c) => { c[at('id')] = 'mine-pp2'; c[at('pp_size')] = '2'; }),
    cells((c) => { c[at('id')] = 'mine-b300'; c[at('system')] = 'b300_sxm'; }),
    // A model the repository has no preset or config for, its config beside the CSV (model_configs/,
    // named as the source names them): NVIDIA's FP8 checkpoint of Llama-3.1-70B under another name.
    cells((c) => { c[at('id')] = 'mine-clone'; c[at('model_path')] = 'acme/Clone-70B'; }),
    cells((c) => { c[at('id')] = 'mine-unknown'; c[at('model_path')] = 'acme/Nothing-70B'; }),
  ].join('\n'));
  const configs = join(dir, 'model_configs');
  mkdirSync(configs);
  for (const [from, to] of [['nvidia--Llama-3.1-70B-Instruct-FP8_config.json', 'nvidia--Clone-70B-FP8_config.json'],
    ['nvidia--Llama-3.1-70B-Instruct-FP8_hf_quant_config.json', 'nvidia--Clone-70B-FP8_hf_quant_config.json']])
    copyFileSync(new URL(`../../data/silicon/model_configs/${from}`, import.meta.url), join(configs, to));
  const out = join(dir, 'out');
  const r = spawnSync(process.execPath, [fileURLToPath(new URL('../../tools/validate.mjs', import.meta.url)),
    '--data', csv, '--out', out], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /3 of 5 runs priced/);
  const ledger = JSON.parse(readFileSync(join(out, 'validation.json'), 'utf8'));
  assert.equal(ledger.data, csv);
  assert.deepEqual(ledger.model_configs, [configs]);
  assert.deepEqual(ledger.runs.map((x) => [x.id, x.status]), [['mine-b200', 'priced'], ['mine-pp2', 'unsupported'],
    ['mine-b300', 'priced'], ['mine-clone', 'priced'], ['mine-unknown', 'unsupported']]);
  assert.equal(ledger.runs[0].request.workload.concurrency, 4);
  // By load: the three priced runs, 4 clients of 1,024-token prompts, in one bucket.
  assert.deepEqual(ledger.by_load.map((b) => [b.clients, b.prompt, b.priced]), [['1-4', 'up to 2,048', 3]]);
  assert.equal(ledger.runs[2].request.gpu, 'B300');
  assert.deepEqual(ledger.runs[3].request.model, { $model: 'nvidia--Clone-70B-FP8_config.json' });
  assert.equal(ledger.models['nvidia--Clone-70B-FP8_config.json'].quantization_config.quant_method, 'modelopt');
  assert.match(ledger.runs[4].reason, /^no preset or config for acme\/Nothing-70B: looked for /);
  assert.ok(ledger.runs[4].reason.includes(`acme--Nothing-70B_config.json in data/silicon/model_configs/, ${configs}`));
  // The same run as the public ledger's, priced the same; the same checkpoint under another name too.
  const committed = JSON.parse(readFileSync(new URL('../../docs/validation.json', import.meta.url), 'utf8'));
  const same = committed.runs.find((x) => x.id === line.split(',')[at('id')]);
  for (const mine of [ledger.runs[0], ledger.runs[3]]) {
    assert.equal(mine.tpot_ms, same.tpot_ms);
    assert.equal(mine.ttft_ms, same.ttft_ms);
  }
  assert.match(readFileSync(join(out, 'VALIDATION.md'), 'utf8'), new RegExp(`Data: \`${csv}\`, 5 measured`));
  assert.ok(existsSync(join(out, 'validation-predicted-vs-measured.svg')));
  // Half an option is a usage error, not the public ledger rewritten.
  const half = spawnSync(process.execPath, [fileURLToPath(new URL('../../tools/validate.mjs', import.meta.url)),
    '--data', csv], { encoding: 'utf8' });
  assert.equal(half.status, 2);
  assert.match(half.stderr, /usage/);
  // So are an option without its value, a typo and any other argument (each used to price and
  // rewrite the public ledger in docs/); --help prints the usage.
  const validate = (...args) => spawnSync(process.execPath,
    [fileURLToPath(new URL('../../tools/validate.mjs', import.meta.url)), ...args], { encoding: 'utf8' });
  for (const [args, said] of [[['--data'], /--data needs a value/], [['--data', '--out', out], /--data needs a value/],
    [['--dta', csv, '--out', out], /unknown argument "--dta"/], [['--baseline', 'now'], /unknown argument "now"/]]) {
    const r = validate(...args);
    assert.equal(r.status, 2, args.join(' '));
    assert.match(r.stderr, said);
    assert.match(r.stderr, /usage: node tools\/validate\.mjs/);
  }
  const help = validate('--help');
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^usage: node tools\/validate\.mjs .*--data RUNS\.csv --out DIR/);
  // A spreadsheet's export (a byte-order mark, CR LF line ends) reads the same.
  const text = readFileSync(csv, 'utf8');
  writeFileSync(join(dir, 'excel.csv'), `\uFEFF${text.split('\n').join('\r\n')}\r\n`);
  const excel = spawnSync(process.execPath, [fileURLToPath(new URL('../../tools/validate.mjs', import.meta.url)),
    '--data', join(dir, 'excel.csv'), '--out', join(dir, 'excel'), '--configs', configs], { encoding: 'utf8' });
  assert.equal(excel.status, 0, excel.stderr);
  assert.deepEqual(JSON.parse(readFileSync(join(dir, 'excel', 'validation.json'), 'utf8')).runs.map((x) => x.tpot_ms),
    ledger.runs.map((x) => x.tpot_ms));
  // Quoted fields (a field with a comma, a doubled quote), as a spreadsheet writes them, read the same.
  const quote = (f) => `"${f.replace(/"/g, '""')}"`;
  const quotedText = text.trim().split('\n').map((l, i) => l.split(',').map((f, j) =>
    (i > 0 && j === at('silicon_data_source') ? quote(`${f}, "noted"`) : quote(f))).join(',')).join('\n');
  writeFileSync(join(dir, 'quoted.csv'), quotedText);
  const quoted = spawnSync(process.execPath, [fileURLToPath(new URL('../../tools/validate.mjs', import.meta.url)),
    '--data', join(dir, 'quoted.csv'), '--out', join(dir, 'quoted'), '--configs', configs], { encoding: 'utf8' });
  assert.equal(quoted.status, 0, quoted.stderr);
  assert.deepEqual(JSON.parse(readFileSync(join(dir, 'quoted', 'validation.json'), 'utf8')).runs.map((x) => x.tpot_ms),
    ledger.runs.map((x) => x.tpot_ms));
  // A quote that never closes is an error naming its line, not a ledger of misread rows.
  writeFileSync(join(dir, 'open.csv'), `${text.trim()}\n"mine-open,${'x,'.repeat(3)}\n`);
  const open = spawnSync(process.execPath, [fileURLToPath(new URL('../../tools/validate.mjs', import.meta.url)),
    '--data', join(dir, 'open.csv'), '--out', join(dir, 'open')], { encoding: 'utf8' });
  assert.equal(open.status, 2);
  assert.match(open.stderr, /open\.csv: line 7 opens a quoted field that never closes/);
  // A CSV of no runs is an error, not a ledger of nulls.
  writeFileSync(join(dir, 'none.csv'), `${keep.map((i) => names[i]).join(',')}\n`);
  const none = spawnSync(process.execPath, [fileURLToPath(new URL('../../tools/validate.mjs', import.meta.url)),
    '--data', join(dir, 'none.csv'), '--out', out], { encoding: 'utf8' });
  assert.equal(none.status, 2);
  assert.match(none.stderr, /none\.csv has no runs/);
  // --configs names a directory that is there.
  const missing = spawnSync(process.execPath, [fileURLToPath(new URL('../../tools/validate.mjs', import.meta.url)),
    '--data', csv, '--out', out, '--configs', join(dir, 'nowhere')], { encoding: 'utf8' });
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /--configs .*nowhere: no such directory/);
  rmSync(dir, { recursive: true, force: true });
});

test('8 prompts filling a 8,192-token step exactly stay in lockstep; 8 tokens more, the waves come apart', () => {
  // Why the ledger's prompts carry their chat template's tokens (docs/SERVING.md, "The validation protocol").
  const cli = fileURLToPath(new URL('../../build/stepcalc', import.meta.url));
  const ttft = (input) => {
    const r = spawnSync(process.env.STEPCALC_CLI || cli, ['serve', '-'], { encoding: 'utf8', input: JSON.stringify({
      model: 'llama-3.1-8b-instruct', gpu: 'H100', mode: 'measured', tp: 1,
      workload: { input_tokens: input, output_tokens: 64, concurrency: 8, num_requests: 96, warmup_requests: 16,
        warmup_drain: true, seed: 1 } }) });
    const out = JSON.parse(r.stdout);
    assert.equal(out.engine.max_num_batched_tokens, 8192);
    return out.ttft_ms;
  };
  const exact = ttft(1024), templated = ttft(1024 + CHAT_TEMPLATE_TOKENS);
  // Every request of every wave waits for the same whole-wave prefill step ...
  assert.equal(exact.p50.toFixed(6), exact.p99.toFixed(6));
  // ... and with the template's tokens they do not: the first tokens spread, and the mean falls.
  assert.ok(templated.p99 > templated.p50 * 1.05, JSON.stringify(templated));
  assert.ok(templated.mean < exact.mean * 0.9, `${templated.mean} against ${exact.mean}`);
});

test('the committed ledger carries the requests the protocol writes today; an edited one is named stale', () => {
  const ledger = JSON.parse(readFileSync(new URL('../../docs/validation.json', import.meta.url), 'utf8'));
  const rows = readRows();
  assert.deepEqual(staleRequests(ledger, rows), []);
  const copy = structuredClone(ledger);
  const priced = copy.runs.filter((r) => r.status === 'priced');
  priced[3].request.workload.input_tokens -= CHAT_TEMPLATE_TOKENS;  // as the ledger was before the template
  const withConfig = priced.find((r) => r.request.model?.$model);
  const file = withConfig.request.model.$model;
  copy.models[file] = { ...copy.models[file], num_hidden_layers: 1 };
  const stale = staleRequests(copy, rows);
  assert.ok(stale.includes(priced[3].id), stale.join());
  assert.ok(stale.includes(withConfig.id), stale.join());
  // A run whose row is gone is stale too.
  assert.ok(staleRequests(ledger, rows.filter((r) => r.id !== priced[0].id)).includes(priced[0].id));
});

test('CSV records as RFC 4180 has them: quoted commas, doubled quotes, line breaks in quotes, CR LF', () => {
  assert.deepEqual(parseCsv('a,b\r\n"x,y","say ""hi"""\n"two\nlines",\n\n  \n', 't'),
    [['a', 'b'], ['x,y', 'say "hi"'], ['two\nlines', '']]);
  assert.throws(() => parseCsv('a,b\n1,2\n"3,4\n', 't'), /^Error: t: line 3 opens a quoted field that never closes$/);
});

test('a CSV without concurrency: silicon_concurrency=, else the batch of each attention data-parallel rank', () => {
  // Every public row with silicon_concurrency= and a batch size agrees with batch_size x attention_dp_size.
  const rows = readRows();
  const both = rows.filter((r) => /silicon_concurrency=/.test(r.silicon_data_source) && r.batch_size !== '');
  assert.ok(both.some((r) => Number(r.attention_dp_size) > 1));
  for (const r of both) assert.equal(clientsOfBatch(r), r.concurrency, r.id);
  assert.equal(clientsOfBatch({ batch_size: '16', attention_dp_size: '4' }), '64');
  assert.equal(clientsOfBatch({ batch_size: '16', attention_dp_size: '' }), '16');
  assert.equal(clientsOfBatch({ batch_size: '' }), '');
  // readRows derives it so when the column is missing.
  const dir = mkdtempSync(join(tmpdir(), 'stepcalc-batch-'));
  writeFileSync(join(dir, 'r.csv'), 'id,model_path,system,isl,osl,silicon_ttft_ms,silicon_tpot_ms,batch_size,' +
    'attention_dp_size,silicon_data_source\na,m,h100_sxm,1,1,1,1,8,2,x\n' +
    'b,m,h100_sxm,1,1,1,1,8,2,silicon_concurrency=4\n');
  assert.deepEqual(readRows(join(dir, 'r.csv')).map((r) => r.concurrency), ['16', '4']);
  rmSync(dir, { recursive: true, force: true });
});

test('the data-parallel runs that repeat a one-engine twin\'s measurement are counted', () => {
  const md = readFileSync(new URL('../../docs/VALIDATION.md', import.meta.url), 'utf8');
  // Kimi-K2.5's TP4 EP16 DP4 runs on B200 carry their TP4 EP4 twins' TTFT and TPOT to 0.1%: all 30.
  const tableRow = (head, tail) => new RegExp(`\\| ${head} \\| \\d+ \\| \\d+ \\| ${tail}`);
  assert.match(md, tableRow('moonshotai/Kimi-K2\\.5 \\| B200 \\| nvfp4 \\| TP4 EP16 DP4',
    '[\\d.]+ \\| [\\d.]+ \\| 30 \\|'));
  // MiniMax-M2.5's on H100 are other runs of the same speed (TPOT ratio 1.00), not the same measurement.
  assert.match(md, tableRow('MiniMaxAI/MiniMax-M2\\.5 \\| H100 \\| fp8 \\| TP4 EP16 DP4',
    '1\\.00 \\| [\\d.]+ \\| 0 \\|'));
});

test('the ledger by load: every priced run in one bucket of clients x prompt length', () => {
  const ledger = JSON.parse(readFileSync(new URL('../../docs/validation.json', import.meta.url), 'utf8'));
  const sum = ledger.by_load.reduce((n, b) => n + b.priced, 0);
  assert.equal(sum, ledger.overall.priced);
  assert.ok(ledger.by_load.every((b) => b.priced > 0 && typeof b.ttft_mape === 'number'));
  assert.match(readFileSync(new URL('../../docs/VALIDATION.md', import.meta.url), 'utf8'),
    /## By load \(clients x prompt length\)\n[^]*\| 5-8 \| up to 2,048 \| \d+ \|/);
});

test('a run too large for ten measured waves is priced with as many as one simulation may take, and says so', () => {
  const big = { model_path: 'openai/gpt-oss-120b', system: 'b200_sxm', precision: 'fp4', gemm_quant_mode: 'nvfp4',
    moe_quant_mode: 'nvfp4', tp_size: '8', moe_tp_size: '8', isl: '1024', osl: '8192', concurrency: '2048' };
  const [fewer, own] = priceRows([row({ ...big, id: 'big' }), row({ ...big, id: 'own', measured_requests: '30000' })]);
  assert.equal(fewer.status, 'priced', fewer.reason);
  const w = fewer.request.workload;
  assert.ok(fewer.fewer_measured.requests >= 2048 && fewer.fewer_measured.requests < 20480, fewer.fewer_measured);
  assert.equal(fewer.fewer_measured.requests % 2048, 0);
  assert.deepEqual([w.num_requests, w.warmup_requests], [4096 + fewer.fewer_measured.requests, 4096]);
  // ... and one wave more than it took is refused by the core (the fewest waves are not given up early).
  const next = String(fewer.fewer_measured.requests + 2048);
  const more = priceRows([row({ ...big, id: 'more', measured_requests: next })]);
  assert.match(String(more[0].reason), /^too_large at workload\.num_requests/);
  // A row's own measured_requests is its own: the core's refusal stands.
  assert.equal(own.status, 'unsupported');
  assert.match(String(own.reason), /^too_large at workload\.num_requests/);
  assert.equal(own.fewer_measured, undefined);
});

test('the ledger against its targets: every bar from the ledger\'s own figures, and where the error is', () => {
  const ledger = JSON.parse(readFileSync(new URL('../../docs/validation.json', import.meta.url), 'utf8'));
  const steps = JSON.parse(readFileSync(new URL('../../docs/accuracy.json', import.meta.url), 'utf8'));
  const { bars, over, flagged } = ledger.targets;
  const o = ledger.overall;
  assert.deepEqual(bars.map((b) => [b.bar, b.now]), [['>= 95%', Math.round(10000 * o.priced / o.runs) / 100],
    ['<= 25%', o.ttft_mape], ['<= 10%', o.tpot_mape], ['all', bars[3].now], ['<= 3%', steps.modes.measured.mape]]);
  assert.deepEqual(bars.map((b) => b.met), [o.priced / o.runs >= 0.95, o.ttft_mape <= 25, o.tpot_mape <= 10,
    over.length === 0, steps.modes.measured.mape <= 3]);
  // The subsets over a bar are exactly those of ten or more priced runs past 50% TTFT or 20% TPOT.
  const judged = ledger.subsets.filter((s) => s.priced >= 10);
  const past = judged.filter((s) => s.ttft_mape > 50 || s.tpot_mape > 20).map((s) => s.key).sort();
  assert.deepEqual(over.map((x) => x.subset).sort(), past);
  assert.equal(bars[3].now, `${judged.length - past.length} of ${judged.length}`);
  // Points: a subset's absolute errors over every priced run; all subsets' points add up to the MAPE.
  const priced = ledger.runs.filter((r) => r.status === 'priced');
  const points = (list, f) =>
    Math.round(100 * 100 * list.reduce((t, r) => t + Math.abs(f(r)), 0) / priced.length) / 100;
  const tpot = (r) => r.tpot_ms / r.silicon_tpot_ms - 1, ttft = (r) => r.ttft_ms / r.silicon_ttft_ms - 1;
  for (const x of over) {
    const list = priced.filter((r) => r.subset === x.subset);
    assert.deepEqual([x.ttft_points, x.tpot_points], [points(list, ttft), points(list, tpot)], x.subset);
  }
  assert.ok(Math.abs(points(priced, tpot) - o.tpot_mape) < 0.011);
  const odd = priced.filter((r) => r.contradicts || r.in_flight);
  assert.deepEqual(flagged, { runs: odd.length, ttft_points: points(odd, ttft), tpot_points: points(odd, tpot) });
  assert.ok(odd.length > 0 && flagged.tpot_points > 1, 'the public runs have measurements that contradict their rows');
  const md = readFileSync(new URL('../../docs/VALIDATION.md', import.meta.url), 'utf8');
  assert.match(md, new RegExp(`\\| TPOT MAPE over the priced runs \\| <= 10% \\| ${o.tpot_mape}% \\| ` +
    `${o.tpot_mape <= 10 ? 'yes' : '\\*\\*no\\*\\*'} \\|`));
});

test('repeated measurements: one measurement under two ids, and the spread of different ones', () => {
  const run = (id, clients, ttft, tpot, predicted = [ttft, tpot]) => ({ id, subset: 'm | H100 | fp8 | TP2',
    status: 'priced', request: { tp: 2, workload: { input_tokens: 1032, output_tokens: 1024, concurrency: clients } },
    ttft_ms: predicted[0], tpot_ms: predicted[1], silicon_ttft_ms: ttft, silicon_tpot_ms: tpot });
  const r = repeats([
    run('a', 8, 100, 10, [150, 12]), run('a-again', 8, 100, 10, [150, 12]),  // one measurement, two ids
    run('b', 8, 120, 11, [150, 12]),  // the same setup measured again, differently
    run('c', 16, 200, 20, [200, 20]),  // another setup, measured once
    run('d', 16, 200, 21, [200, 20]),  // ... and again: another TPOT, so not the same measurement
    { id: 'x', subset: 'm | H100 | fp8 | TP2', status: 'unsupported', reason: 'no' },
  ]);
  assert.equal(r.identical, 1);
  assert.deepEqual(r.first_identical_pair, ['a', 'a-again']);
  // one run per measurement: a, b, c, d
  assert.equal(r.distinct.priced, 4);
  assert.equal(r.distinct.ttft_mape, Math.round(100 * 100 * (0.5 + 0.25 + 0 + 0.0) / 4) / 100);
  // setups with two or more different measurements: {a, b} (means 110 ms, 10.5 ms) and {c, d} (200 ms, 20.5 ms)
  assert.deepEqual(r.spread, { setups: 2, runs: 4,
    ttft_deviation: Math.round(100 * 100 * (10 / 110 + 10 / 110 + 0 + 0) / 4) / 100,
    tpot_deviation: Math.round(100 * 100 * (0.5 / 10.5 + 0.5 / 10.5 + 0.5 / 20.5 + 0.5 / 20.5) / 4) / 100 });
  // nothing repeated: nothing said
  assert.deepEqual(repeats([run('c', 16, 200, 20)]).spread, { setups: 0, runs: 0, ttft_deviation: null,
    tpot_deviation: null });
});
