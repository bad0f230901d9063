// SPDX-License-Identifier: Apache-2.0
// npm test's ledger check (issue #22): re-prices the fixed spread of priced runs named in
// docs/validation.json ("spread", chosen by tools/validate-ledger.mjs spreadOf) with the
// native CLI and fails if any predicted mean differs from the committed file (an estimate
// changed without `npm run validate`), or if any run's stored request is not the one the
// protocol now writes for its row, or if the file's overall TTFT or TPOT MAPE is more than 1
// point above docs/validation-baseline.json.
// Usage: node tools/validate-check.mjs
import { LEDGER, BASELINE, readRows, readText, serve, staleRequests } from './validate-ledger.mjs';

const ledger = JSON.parse(readText(LEDGER));
const baseline = JSON.parse(readText(BASELINE));
const problems = [];

/** @type {Map<string, any>} */
const byId = new Map(ledger.runs.map((/** @type {any} */ r) => [r.id, r]));
const spread = ledger.spread.map((/** @type {string} */ id) => byId.get(id));
if (spread.length === 0 || spread.some((/** @type {any} */ r) => !r || r.status !== 'priced'))
  problems.push(`${LEDGER}: the spread names a run that is missing or not priced`);
/** The exact request: its config model put back from `models`. @param {any} r */
const requestOf = (r) => {
  const m = r.request.model;
  return m && typeof m === 'object' && m.$model ? { ...r.request, model: ledger.models[m.$model] } : r.request;
};
// Every stored request is the one the protocol writes today (a protocol edit re-validates).
const stale = staleRequests(ledger, readRows());
if (stale.length)
  problems.push(`${stale.length} run(s) of ${LEDGER} carry a request the protocol no longer writes (${stale[0]}, ...)`);
const started = Date.now();
const results = problems.length ? [] : serve(spread.map(requestOf));
results.forEach((/** @type {any} */ got, /** @type {number} */ i) => {
  const want = spread[i];
  if (got.error)
    problems.push(`${want.id}: now refused (${got.error.code} at ${got.error.path}: ${got.error.message})`);
  else if (got.ttft_ms.mean !== want.ttft_ms || got.tpot_ms.mean !== want.tpot_ms)
    problems.push(`${want.id}: TTFT ${got.ttft_ms.mean} ms (ledger ${want.ttft_ms}), ` +
      `TPOT ${got.tpot_ms.mean} ms (ledger ${want.tpot_ms})`);
});
const seconds = (Date.now() - started) / 1000;
for (const metric of /** @type {const} */ (['ttft_mape', 'tpot_mape'])) {
  const now = ledger.overall[metric], base = baseline[metric];
  if (typeof now !== 'number' || typeof base !== 'number')
    problems.push(`${metric}: missing in ${LEDGER} or ${BASELINE}`);
  else if (now > base + 1)
    problems.push(`overall ${metric} ${now}% is worse than the baseline ${base}% by more than 1 point`);
}
if (problems.length) {
  console.error(`validate-check: ${problems.length} problem(s); re-run \`npm run validate\` if an estimate changed ` +
    'on purpose, and say why in the commit:');
  for (const p of problems.slice(0, 20)) console.error(`  ${p}`);
  process.exit(1);
}
console.log(`validate-check: ${spread.length} ledger runs re-priced as committed (${seconds.toFixed(1)} s); ` +
  `overall MAPE TTFT ${ledger.overall.ttft_mape}%, TPOT ${ledger.overall.tpot_mape}% ` +
  `(baseline ${baseline.ttft_mape}%, ${baseline.tpot_mape}%)`);
