// SPDX-License-Identifier: Apache-2.0
// Which kernel pack parts to fetch first: the parts a dense BF16 model needs (GEMM,
// attention, all-reduce: ~19 KB gzipped on an H100); then, if the request still needs more
// (MoE, MLA, FP8), every part of the version but the ones only some models read (gated
// DeltaNet's, DeepSeek sparse attention's, Kimi delta attention's) unless the core's kernels_not_loaded names one of
// them (it names those first). Shared by the page's pricing and the serving worker.
export const DENSE_PARTS = ['gemm-bf16', 'attention-bf16', 'allreduce'];
/** Parts only a model with those layers reads: gated DeltaNet, DeepSeek sparse attention, Kimi delta attention. */
export const MODEL_PARTS = ['gdn', 'dsa', 'kda'];

/**
 * The parts of `gpu`'s `version` (default when absent) to load on try `tries` (1, 2): the
 * dense ones first, then every part but MODEL_PARTS the error `message` does not name;
 * undefined when `kernels` (the kernel sets of calc.catalogue() or calc.presets()) has no such set.
 * @param {any[]} kernels @param {string} gpu @param {string | undefined} version @param {number} tries
 * @param {string} [message] the kernels_not_loaded error's message ("The dsa tables of ...")
 */
export function partsToLoad(kernels, gpu, version, tries, message = '') {
  const set = kernels.find((/** @type {any} */ k) => k.gpu.toUpperCase() === String(gpu).toUpperCase() &&
    (version ? k.version === version : k.default));
  const names = set?.parts.map((/** @type {any} */ p) => p.name);
  if (tries !== 1) {
    return names?.filter((/** @type {string} */ n) => !MODEL_PARTS.includes(n) ||
      message.startsWith(`The ${n} tables `));
  }
  const dense = names?.filter((/** @type {string} */ n) => DENSE_PARTS.includes(n));
  return dense?.length ? dense : undefined;
}
