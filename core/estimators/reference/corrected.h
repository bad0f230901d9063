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

/// Batch kernel latency (us) of `batch` sequences at KV `kv` from the measured
/// cells: bilinear where measured; an unmeasured cell scales the largest measured
/// batch at that KV by batch size; beyond the longest KV it scales linearly with KV;
/// below the shortest it reads the shortest (fixed kernel cost).
double decode_batch_latency_us(const DecodeTable& table, double batch, double kv);

/// The batch latency (us) at measured KV index `ik` (decode_batch_latency_us's value on
/// the KV axis), for a caller that interpolates along KV itself.
double decode_latency_at_kv(const DecodeTable& table, double batch, size_t ik);

/// `decode_attention_latency`: a decode request's time is its share of the measured kernel,
/// latency(B, kv) / B, over all layers, on one GPU holding every head (the caller multiplies by
/// the TP scaling): the model's heads x head dim over the measured config's, whose heads are
/// split over the table's TP GPUs. The share is the batch latency times a factor of the batch.
struct DecodeLatencyShare {
  double factor = 0;  ///< seconds of a request's share per microsecond of batch latency; 0: no config
  /// The share, seconds; 0 when it is not positive.
  double of(double batch_latency_us) const {
    const double s = batch_latency_us * factor;
    return s > 0 ? s : 0;
  }
};
/// The share's factor for `batch` sequences of request `r` on `table` (measured with `config`).
DecodeLatencyShare decode_latency_share(const Request& r, const DecodeTable& table, const PrefillTable& config,
                                        double batch);

/// The MFU (relative to `peak_flops`) a share of `share_s` seconds gives `flops`: 0 when either
/// is not positive (the FLOP-weighted mean's term; the harmonic mean sums the shares).
inline double decode_share_mfu(double flops, double share_s, double peak_flops) {
  return share_s > 0 && flops > 0 ? flops / (peak_flops * share_s) : 0;
}

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
