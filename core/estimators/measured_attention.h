// SPDX-License-Identifier: Apache-2.0
// Attention of one layer in the `measured` mode: the one varlen kernel vLLM launches
// for a step, priced request by request from the decode and prefill tables.
//
// - One launch per layer: its fixed cost (the table's time for a single 1-token
//   sequence) is counted once, whatever mix of requests the step holds.
// - Decode: each request pays its share of the batch kernel at its OWN KV length,
//   T_dec(B, kv_i) / B with B the step's decode requests; a uniform batch gets exactly
//   the measured T_dec(B, kv). Its variable work is the sum of shares minus the fixed cost.
// - Prefill: each chunk pays its share of the batch kernel at its total length,
//   (T_pre(b, p + n) - fixed) / b, with b the step's chunks. A chunk after a cached
//   prefix p computes only rows p..p+n of the causal square of side p + n: the share is
//   scaled by that fraction of the causal work, n (2p + n) / (p + n)^2, and is at least
//   what reading its p + n cached tokens costs a decode request (its decode share at
//   that length), since the tables measure prefill without a prefix.
// - DeepSeek sparse attention (DeepSeek-V3.2: the MLA path, read from the DSA module
//   tables): each query attends to the indexer's top-k tokens, so a chunk's share is its
//   queries' share of the top-k pairs, and the decode floor reads at most top-k tokens.
#pragma once

#include "estimators/measured.h"

namespace stepcalc {

/// Attention time of one layer in microseconds. `out` (may be null) receives the
/// split (fixed, decode, prefill); with `detail` also the FLOPs, bytes and the lookups
/// (requests grouped by length), which allocates. Without `detail` nothing allocates.
/// `spots` (a simulation's, one per plan): where the decodes' KV lengths fall in the decode
/// table, kept across steps (the same double); `rows` the same for the table's rows by batch
/// (natively and in the planner's module).
double attention_layer_us(const MeasuredPlan& plan, const Step& step, AttentionCost* out, bool detail = false,
                          DecodeKvSpots* spots = nullptr, DecodeRowCache* rows = nullptr);

/// One decode-table kernel time (us) for `batch` sequences at `kv_len`, on the plan's
/// attention path (MLA module projections removed, stand-in scaled); `kernel` gets the cells.
double decode_kernel_us(const MeasuredPlan& plan, double batch, double kv_len, KernelTime* kernel);

/// One prefill-table kernel time (us) for `batch` sequences of `seq` tokens.
double prefill_kernel_us(const MeasuredPlan& plan, double batch, double seq, KernelTime* kernel);

}  // namespace stepcalc
