// SPDX-License-Identifier: Apache-2.0
// Typechecked (never run) by `tsc -p tests/types`: the declarations describe the
// loader as documented, and misuse is a type error.
import { load, price, StepCalcError } from 'stepcalc';
import type { Request, Result, ServeResult, SummaryColumns, SummaryResult, SweepGrid, SweepPoint } from 'stepcalc';

const request: Request = {
  model: 'llama-3.1-8b-instruct',
  tp: 2,
  mode: 'corrected',
  corrected: { switches: { tp_allreduce: false }, params: { cpu_step_us: 1500 } },
  step: {
    prefill_requests: [{ progress_index: 0, num_new_prefill_tokens: 2048 }],
    decode_requests: [{ progress_index: 1000 }],
  },
};

export async function demo(): Promise<number> {
  const calc = await load();
  const result: Result = calc.price(request);
  const ms: number = result.step_time_ms;
  const decode = result.phases.decode;
  const mfu: number = decode ? decode.attn_effective_mfu : 0;
  const points: SweepPoint[] = calc.sweep(request, 'decode_kv', [1024, 2048]);
  for (const p of points) if ('error' in p) console.log(p.error.path);
  const tiny = { num_hidden_layers: 2, hidden_size: 64, num_attention_heads: 8, torch_dtype: 'bfloat16' };
  const viaHelper = await price({ model: tiny, step: {} });
  try {
    calc.price('{');
  } catch (e) {
    if (e instanceof StepCalcError) console.log(e.code, e.path);
  }
  // @ts-expect-error: not a sweep axis
  calc.sweep(request, 'width', [1]);
  // @ts-expect-error: a step is required
  calc.price({ model: 'llama-2-7b-hf' });
  // @ts-expect-error: unknown switch name
  const bad: Request = { model: 'x', step: {}, corrected: { switches: { magic: true } } };
  // @ts-expect-error: token counts are numbers
  const bad2: Request = { model: 'x', step: { decode_requests: [{ progress_index: '5' }] } };
  const served: ServeResult = calc.serve(
    { model: 'qwen3-32b', tp: 4,
      workload: { input_tokens: 1024, output_tokens: { distribution: 'uniform', min: 16, max: 256 }, concurrency: 8 } },
    { onProgress: (share: number) => share < 1 },
  );
  const ttft: number =
    served.ttft_ms.p99 + served.memory.kv_cache_blocks + (served.cost?.usd_per_million_output_tokens ?? 0);
  // @ts-expect-error: a serving request needs a workload
  calc.serve({ model: 'qwen3-32b' });
  return ttft + ms + mfu + viaHelper.step_time_us + calc.presets().models.length + (bad ? 0 : 1) + (bad2 ? 0 : 1);
}

// Detail levels and the batch entry points.
export function detailDemo(calc: Awaited<ReturnType<typeof load>>): number {
  const summary: SummaryResult = calc.price(request, { detail: 'summary' });
  const full: Result = calc.price(request, { detail: 'full' });
  const many: SummaryColumns = calc.priceMany([request, request], { mode: 'corrected' });
  const cols: SummaryColumns = calc.sweepColumns(request, 'decode_kv', new Float64Array([1024, 2048]));
  const grid: SweepGrid = calc.sweep2d(request, { axis: 'decode_kv', values: [1, 2] }, { axis: 'tp', values: [1, 2] });
  const codes: readonly string[] = grid.warning_codes[0];
  // @ts-expect-error a summary has no breakdown
  summary.breakdown;
  return summary.step_time_us + full.step_time_ms + many.step_time_us[0] + cols.total_us[0] + grid.width + codes.length;
}
