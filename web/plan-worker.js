// SPDX-License-Identifier: Apache-2.0
// The Plan panel's Web Worker: runs calc.plan (docs/PLAN.md) off the page's thread, so a
// search of many simulations never blocks input. It loads the module once and keeps it (with
// the planner's module and the kernel tables calc.plan fetched) for the next plan.
//   in:  {id, baseUrl, share?, request} (share: the page's calc.forWorker(), its compiled
//        module and kernel packs, neither fetched nor compiled again here)
//   out: {id, type: 'progress', share} (0..1, at most every 50 ms)
//        {id, type: 'result', result} | {id, type: 'error', error: {code, path, message}}
// Cancel is the page terminating the worker: a plan runs in one call into the module, which
// reads no message until it returns (calc.plan's onProgress is how it would stop itself).
import { load } from '../wasm/stepcalc.js';

let calc = null;

const plain = (error) =>
  ({ code: error.code ?? 'error', path: error.path ?? '', message: error.message ?? String(error) });

self.onmessage = async ({ data }) => {
  const { id, baseUrl, share, request } = data;
  let last = 0;
  const onProgress = (share) => {
    const now = performance.now();
    if (now - last < 50 && share < 1) return;
    last = now;
    self.postMessage({ id, type: 'progress', share });
  };
  try {
    calc ??= await load({ baseUrl, ...share });
    self.postMessage({ id, type: 'result', result: await calc.plan(request, { onProgress }) });
  } catch (error) {
    self.postMessage({ id, type: 'error', error: plain(error) });
  }
};
