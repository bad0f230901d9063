// SPDX-License-Identifier: Apache-2.0
// The measured mode's part of `npm run accuracy` (tools/accuracy.mjs): its two CPU
// terms refitted from the priced GPU times (the fit that chose the core's rounded
// values), held-out figures (fit on one workload, test on the other), and the
// per-operator ablation (each operator's share and the error without it).

/** Requests of a request object's step. */
export const requestsOf = (request) => request.step.prefill_requests.length + request.step.decode_requests.length;

/**
 * The CPU terms minimising the mean absolute relative error (MAPE) of
 * gpu + step_us + per_request_us * requests against measured: iteratively reweighted
 * least squares (weights 1 / (measured^2 |relative error|)), 200 rounds, from the
 * least-squares start. MAPE is the figure reported, so it is the one minimised.
 */
export function fitCpuL1(measuredUs, gpuUs, requests) {
  let a = 0, b = 0;
  for (let round = 0; round < 200; round++) {
    let s0 = 0, s1 = 0, s2 = 0, t0 = 0, t1 = 0;
    measuredUs.forEach((m, i) => {
      const n = requests[i], y = m - gpuUs[i];
      const rel = round === 0 ? 1 : Math.max(Math.abs((gpuUs[i] + a + b * n - m) / m), 1e-5);
      const w = 1 / (m * m * rel);
      s0 += w; s1 += w * n; s2 += w * n * n; t0 += w * y; t1 += w * n * y;
    });
    const det = s0 * s2 - s1 * s1;
    a = (t0 * s2 - t1 * s1) / det;
    b = (s0 * t1 - s1 * t0) / det;
  }
  return { step_us: a, per_request_us: b };
}

/** Predictions of gpu + the CPU terms `p`. */
export const withCpu = (gpuUs, requests, p) => gpuUs.map((g, i) => g + p.step_us + p.per_request_us * requests[i]);

/**
 * Held-out figures: the CPU terms fitted on the rows of one workload, errors on the
 * other's. `rows` carry `workload`; `stats(pred, measured)` gives the error summary.
 */
export function heldOut(rows, measuredUs, gpuUs, requests, stats) {
  const workloads = [...new Set(rows.map((r) => r.workload))].sort();
  const out = [];
  for (const train of workloads) {
    for (const test of workloads) {
      if (train === test) continue;
      const pick = (xs, w) => xs.filter((_, i) => rows[i].workload === w);
      const p = fitCpuL1(pick(measuredUs, train), pick(gpuUs, train), pick(requests, train));
      const pred = withCpu(pick(gpuUs, test), pick(requests, test), p);
      out.push({ train, test, params: p, ...stats(pred, pick(measuredUs, test)) });
    }
  }
  return out;
}

/**
 * Per-operator ablation: for each operator name of the measured results, its mean
 * share of the step time and the error summary of the step time without it (the CPU
 * terms not refitted, so the figure says how much the operator carries).
 */
export function operatorAblation(results, measuredUs, stats) {
  const names = [];
  for (const r of results) for (const op of r.measured.operators) if (!names.includes(op.name)) names.push(op.name);
  return names.map((name) => {
    const time = results.map((r) => r.measured.operators.filter((o) => o.name === name)
      .reduce((s, o) => s + o.time_us, 0));
    const without = results.map((r, i) => r.measured.gpu_time_us + r.measured.cpu_time_us - time[i]);
    const share = 100 * time.reduce((s, t, i) => s + t / (without[i] + t), 0) / time.length;
    return { name, share, ...stats(without, measuredUs) };
  });
}

/** The measured mode's section of docs/ACCURACY.md, as lines. */
export function measuredReport(s, { f1, f2, sg }) {
  const row = (label, x) => `| ${label} | ${x.n} | ${f2(x.mape)} | ${f2(x.median)} | ${sg(x.bias)} | ${f2(x.p90)} |`;
  return [
    '## The measured mode',
    '',
    'Each step is priced operator by operator from the measured vLLM kernel tables of the H100',
    '(its default tables, vllm-0.24.0: docs/KERNELS.md, "Default tables"). Its two CPU terms',
    `are the only fitted values: ${s.used.step_us} us per step and ${s.used.per_request_us} us per request in ` +
      'the core,',
    `rounded from the fit below (${f1(s.fit.step_us)} and ${f2(s.fit.per_request_us)}): the values minimising ` +
      'the MAPE of',
    'GPU time + CPU terms over all steps of this file (iteratively reweighted least squares on the',
    'relative error, tools/accuracy-measured.mjs). Everything else comes from the tables, the model\'s',
    'config and datasheet facts.',
    '',
    '| CPU terms | n | MAPE | median | bias | p90 |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    row('the fit, unrounded, on this file', s.fitStats),
    ...s.heldOut.map((h) =>
      row(`fitted on ${h.train} (${f1(h.params.step_us)} + ${f2(h.params.per_request_us)}/request), ` +
      `tested on ${h.test}`, h)),
    '',
    'The held-out rows fit the two terms on one workload and test on the other: the same model and',
    'GPU, different traffic. The steps\' cycles include what vLLM 0.15.1\'s asynchronous scheduling',
    'hides or exposes from one step to the next (a few steps measure less than their own GPU work, a',
    'few absorb the previous one\'s), which no per-step model can follow.',
    '',
    '### Each operator\'s share and effect',
    '',
    'Mean share of the predicted step time, and the errors with the operator removed (CPU terms not',
    'refitted): the operators that carry the prediction are those whose removal hurts most.',
    '',
    '| operator | share % | MAPE without it | bias without it |',
    '| --- | ---: | ---: | ---: |',
    ...s.ablation.map((a) => `| ${a.name} | ${f2(a.share)} | ${f2(a.mape)} | ${sg(a.bias)} |`),
    '',
  ];
}
