// SPDX-License-Identifier: Apache-2.0
// The Serving panel's Web Worker: runs calc.serve off the page's thread, so a
// simulation of thousands of engine steps never blocks input. One job at a time; the worker
// stays for the next job (web/serving-runner.js), keeping the module and the tables it loaded:
//   in:  {id, baseUrl, share?, request, curve: [{point, request}]} (request null: only the
//        curve; `point` says which, e.g. {concurrency: 8} or {rate: 2}, and comes back with its
//        result; share: the page's calc.forWorker(), its compiled module and kernel packs,
//        so that they are neither fetched nor compiled again here)
//   out: {id, type: 'progress', share} (0..1 over the whole job, at most every 50 ms)
//        {id, type: 'result', result} | {id, type: 'error', error: {code, path, message}} (the job ends)
//        {id, type: 'point', point, result | error} per curve point, then {id, type: 'done'}
// Cancel is the page terminating the worker (a running simulation cannot read messages).
import { load } from '../wasm/stepcalc.js';
import { partsToLoad } from './kernel-parts.js';

let calc = null;

/**
 * calc.serve, loading the GPU's measured kernel tables when the mode needs them: the dense
 * parts first (those the page shared are not read again), then every part the model may read.
 */
async function serve(request, onProgress) {
  for (let tries = 1; ; tries++) {
    try {
      return calc.serve(request, { onProgress });
    } catch (error) {
      if (error.code !== 'kernels_not_loaded' || tries > 2) throw error;
      await calc.loadKernels(request.gpu, request.kernels,
        partsToLoad(calc.presets().kernels, request.gpu, request.kernels, tries, error.message));
    }
  }
}

const plain = (error) =>
  ({ code: error.code ?? 'error', path: error.path ?? '', message: error.message ?? String(error) });

self.onmessage = async ({ data }) => {
  const { id, baseUrl, share, request, curve = [] } = data;
  const first = request ? 1 : 0;
  const parts = first + curve.length;
  let last = 0;
  const progress = (done) => (share) => {
    const now = performance.now();
    if (now - last < 50) return;
    last = now;
    self.postMessage({ id, type: 'progress', share: (done + share) / parts });
  };
  try {
    calc ??= await load({ baseUrl, ...share });
    if (request) self.postMessage({ id, type: 'result', result: await serve(request, progress(0)) });
  } catch (error) {
    self.postMessage({ id, type: 'error', error: plain(error) });
    return;
  }
  for (const [i, point] of curve.entries()) {
    try {
      const result = await serve(point.request, progress(first + i));
      self.postMessage({ id, type: 'point', point: point.point, result });
    } catch (error) {
      self.postMessage({ id, type: 'point', point: point.point, error: plain(error) });
    }
  }
  self.postMessage({ id, type: 'done' });
};
