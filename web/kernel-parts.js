// SPDX-License-Identifier: Apache-2.0
// Which kernel pack parts to fetch first: the parts a dense BF16 model needs (GEMM,
// attention, all-reduce: ~19 KB gzipped on an H100); every part of the version only if
// the request still needs more (MoE, MLA, FP8). Shared by the page's pricing and the
// serving worker.
export const DENSE_PARTS = ['gemm-bf16', 'attention-bf16', 'allreduce'];

/**
 * The parts of `gpu`'s `version` (default when absent) to load on try `tries` (1, 2):
 * the dense ones first, then every part (undefined).
 * @param {any} calc @param {string} gpu @param {string | undefined} version @param {number} tries
 */
export function partsToLoad(calc, gpu, version, tries) {
  if (tries !== 1) return undefined;
  const set = calc.presets().kernels.find((k) => k.gpu.toUpperCase() === String(gpu).toUpperCase() &&
    (version ? k.version === version : k.default));
  const dense = set?.parts.map((p) => p.name).filter((n) => DENSE_PARTS.includes(n));
  return dense?.length ? dense : undefined;
}
