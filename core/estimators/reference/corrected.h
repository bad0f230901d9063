// SPDX-License-Identifier: Apache-2.0
// The "corrected" mode: named switches over the reference model, each fixing one
// documented weakness (docs/CORRECTED-MODE.md). All switches off is exactly
// "blis-v2"; these functions are only called for a switch that is on.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/error.h"
#include "estimators/step_result.h"
#include "kernels/reference/mfu_tables.h"
#include "request/corrected_config.h"
#include "request/request.h"

namespace stepcalc {

/// The switches of a mode: blis-v2 all off, corrected all on with the default
/// parameters (the measured mode has none: all off).
CorrectedSettings switches_for_mode(Mode mode);

/// The mode's switches with the request's `corrected` overrides applied (their
/// values were range-checked when the request was read).
CorrectedSettings switches_for_request(const Request& r);

/// The names of the modes, default first.
std::vector<std::string> mode_names();

/// CPU overhead of the step in microseconds: the reference's perLayerOverhead * L /
/// tp, or with `cpu_overhead` cpu_step_us + cpu_per_request_us * requests.
double overhead_us(const CorrectedSettings& sw, const Request& r);

/// `decode_attention_latency`: the MFU (relative to `peak_flops`) of one decode
/// request of KV length `kv` in a batch of `batch`, derived from the measured
/// kernel latency so that flops / (peak_flops * mfu) / tp is its share of the
/// kernel time on one GPU. `flops` is the request's attention FLOPs over all layers;
/// `config` is the measured attention config (heads, head dim) of `table`.
double decode_latency_mfu(const Request& r, const DecodeTable& table, const PrefillTable& config, double batch,
                          double kv, double flops, double peak_flops);

/// Batch kernel latency (us) of `batch` sequences at KV `kv` from the measured
/// cells: bilinear where measured; an unmeasured cell scales the largest measured
/// batch at that KV by batch size; beyond the longest KV it scales linearly with KV;
/// below the shortest it reads the shortest (fixed kernel cost).
double decode_batch_latency_us(const DecodeTable& table, double batch, double kv);

/// The batch latency (us) at measured KV index `ik` (decode_batch_latency_us's value on
/// the KV axis), for a caller that interpolates along KV itself.
double decode_latency_at_kv(const DecodeTable& table, double batch, size_t ik);

/// decode_latency_mfu from the batch latency decode_batch_latency_us gave.
double decode_latency_mfu_of(const Request& r, const DecodeTable& table, const PrefillTable& config, double batch,
                             double batch_latency_us, double flops, double peak_flops);

/// `prefill_attention_length`: one prefill chunk (prefix `progress`, `new_tokens`)
/// in seconds on ONE GPU holding every head (the caller divides by tp): causal
/// FLOPs 2*H*n*(2p+n)*D per layer at the efficiency measured at length p + n.
double prefill_chunk_attn_s(const Request& r, const PrefillTable& table, double progress, double new_tokens,
                            double layers);

/// `gemm_roofline`: one layer's GEMM of the full shape (m, k, n) in seconds, the
/// largest of tensor-core time (dtype peak = TFlopsPeak * 2 / bpp at the pair's best
/// measured efficiency), weight streaming (k*n*bpp / effective bandwidth) and the
/// measured FP8 kernel time scaled by k*n (M < 8 reads M = 8: the weights must be
/// read anyway). Fills the term's compute_s, floor_s and kernel_floor_s.
double gemm_roofline_s(const CorrectedSettings& sw, const GemmTable& table, double peak_flops_bf16, double peak_bw,
                       double bpp, GemmTerm* term);

/// `tp_allreduce`: 2 all-reduces per layer of tokens * hidden * 2 bytes (16-bit
/// activations), ring traffic 2 (tp-1)/tp over NVLink plus a fixed latency; 0 at tp 1.
double allreduce_s(const CorrectedSettings& sw, const Request& r, double tokens);

}  // namespace stepcalc
