// SPDX-License-Identifier: Apache-2.0
// The page's pricing Web Worker (web/pricer.js): prices the steps too big to price on the
// page's thread, so that input is never kept waiting by one (a 45,000-decode step in the
// measured mode held the page for more than a second per edit). Jobs run one at a time, in
// the order they are posted; the page ends the worker to drop a job a newer edit made stale,
// since a call into the module reads no message until it returns.
//   in:  {id, baseUrl, share?, job, requestId?, request?, ...}: `share` comes with a worker's
//        first job, the page's calc.forWorker() (its compiled module and the kernel packs it has
//        read), so that nothing is fetched or compiled again here; a request object comes once
//        with its `requestId`, later jobs name it by that alone (the last HELD_REQUESTS are held)
//        job 'price'   {request, reference?}: the result with its per-request lookup lists cut
//                      to what the page shows (web/lookups.js cutLookups), `lookups` the rows of
//                      the whole table, and, when `reference` names a mode, the summary of the
//                      same step in that mode (null when it refuses it); the whole result is kept
//                      for 'lookups-csv' under this job's id
//        job 'summary' {request, patch?}: calc.price({...request, ...patch}) at summary detail
//                      (`request` may be JSON text: the core's check of a request as written)
//        job 'sweep'   {request, axis, values}: calc.sweepColumns
//        job 'lookups-csv' {request, token}: the CSV records of the lookup table of the result
//                      kept under the id `token`, or of `request` priced again
//   out: {id, ok: true, value} | {id, ok: false, error: {code, path, message}}
import { load } from '../wasm/stepcalc.js';
import { cutLookups, lookupsCsv } from './lookups.js';
import { csvRecords } from './export.js';
import { HELD_REQUESTS } from './pricer.js';

let calc = null;
/** The requests the page sent, by number: the last HELD_REQUESTS, as the page counts them. */
const held = new Map();
/** The files of the kernel packs the page shared with this worker. */
let shared = new Set();
/** {token, result}: the whole result of the last 'price' job. */
let kept = null;

/**
 * `run()`, a call into the module, after loading the kernel packs the page shared for the
 * request's GPU when the core asks for tables; a request that needs more than those gets the
 * core's kernels_not_loaded, and the page fetches them (web/pricing.js) and asks again.
 */
async function withTables(request, run) {
  try {
    return run();
  } catch (error) {
    if (error.code !== 'kernels_not_loaded' || typeof request !== 'object') throw error;
    const gpu = String(request.gpu).toUpperCase();
    const set = calc.presets().kernels.find((k) => k.gpu.toUpperCase() === gpu &&
      (request.kernels ? k.version === request.kernels : k.default));
    const parts = set?.parts.filter((p) => shared.has(p.file)).map((p) => p.name);
    if (!parts?.length) throw error;
    await calc.loadKernels(set.gpu, set.version, parts);
    return run();
  }
}

const jobs = {
  async price({ id, request, reference }) {
    const whole = await withTables(request, () => calc.price(request));
    kept = { token: id, result: whole };
    const { result, total } = cutLookups(whole);
    let summary = null;
    if (reference) {
      try {
        summary = calc.price({ ...request, mode: reference, corrected: undefined }, { detail: 'summary' });
      } catch {
        summary = null; // the reference model may refuse what the shown mode prices
      }
    }
    return { result, lookups: total, reference: summary };
  },
  summary({ request, patch }) {
    const asked = patch ? { ...request, ...patch } : request;
    return withTables(asked, () => calc.price(asked, { detail: 'summary' }));
  },
  sweep: ({ request, axis, values }) => withTables(request, () => calc.sweepColumns(request, axis, values)),
  async 'lookups-csv'({ request, token }) {
    const whole = kept?.token === token ? kept.result : await withTables(request, () => calc.price(request));
    return { records: csvRecords(lookupsCsv(whole)) };
  },
};

const plain = (error) =>
  ({ code: error?.code ?? 'error', path: error?.path ?? '', message: error?.message ?? String(error) });

/** The request a job names: given, or held since an earlier job. */
function requestOf(data) {
  if (data.requestId === undefined) return data.request;
  if ('request' in data) {
    held.set(data.requestId, data.request);
    if (held.size > HELD_REQUESTS) held.delete(held.keys().next().value);
  }
  return held.get(data.requestId);
}

self.onmessage = async ({ data }) => {
  const { id, baseUrl, share, job } = data;
  data.request = requestOf(data);
  try {
    if (share) shared = new Set(Object.keys(share.kernelPacks ?? {}));
    calc ??= await load({ baseUrl, ...share });
    self.postMessage({ id, ok: true, value: await jobs[job](data) });
  } catch (error) {
    self.postMessage({ id, ok: false, error: plain(error) });
  }
};
