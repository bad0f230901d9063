// SPDX-License-Identifier: Apache-2.0
// What one GPU holds when vLLM serves a model, and how many KV-cache blocks that
// leaves: vLLM 0.12-0.15's start-up accounting (docs/SERVING.md). vLLM may use
// `gpu_memory_utilization` of the memory CUDA reports; from that it subtracts the
// weights, the activation peak of a profiling forward pass over
// `max_num_batched_tokens` tokens and the memory outside PyTorch that grew
// meanwhile (NCCL buffers); the rest is the KV cache, cut into blocks of
// `block_size` tokens over all layers. CUDA graphs are captured afterwards, in the
// memory above the utilization budget (their estimate is reported, not subtracted).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/gpu_spec.h"
#include "model/model_spec.h"
#include "request/workload.h"

namespace stepcalc {

/// Bytes are per GPU.
struct ServingMemory {
  std::string gpu;
  int64_t tp = 1;
  double gpu_memory_bytes = 0;        ///< what CUDA reports (engine_defaults.h)
  double gpu_memory_utilization = 0;  ///< share vLLM may use
  double budget_bytes = 0;            ///< gpu_memory_bytes x utilization
  double weights_bytes = 0;           ///< every parameter this GPU holds (all experts), dtype-aware
  double activation_bytes = 0;        ///< peak of the profiling pass: forward over max_num_batched_tokens + sampler
  double non_torch_bytes = 0;         ///< NCCL buffers at this TP (AIConfigurator's observed figures)
  double kv_cache_bytes = 0;          ///< budget - weights - activations - non-torch (negative: does not fit)
  double kv_bytes_per_token = 0;      ///< K and V (or MLA's latent) of one token over all layers
  int64_t block_size = 16;
  int64_t kv_cache_blocks = 0;  ///< what vLLM logs as its GPU KV-cache blocks
  int64_t kv_cache_tokens = 0;  ///< blocks x block_size (over the full-attention groups)
  /// vLLM's hybrid KV allocator (sliding-window models): the layers form groups of equal
  /// size, full-attention and sliding ones; a block holds one page of each layer of a group,
  /// and a request holds blocks in every group (a sliding group only the window's).
  int64_t kv_full_groups = 1, kv_sliding_groups = 0;
  int64_t kv_window_tokens = 0;  ///< the sliding window (kv_sliding_groups > 0)
  /// Gated DeltaNet models (vLLM's hybrid allocator for attention + mamba-style layers): the
  /// linear layers form kv_state_groups groups, each holding ONE block per request (its
  /// fixed state); the attention block size grows until one attention layer's page holds a
  /// linear layer's state (block_size is then that size), and the state page is padded to it.
  int64_t kv_state_groups = 0;
  double state_bytes_per_layer = 0;    ///< one request's conv + recurrent state in one linear layer, this GPU
  double state_bytes_per_request = 0;  ///< over every linear layer (before padding to the page)
  double page_bytes = 0;               ///< one block of one layer (hybrid: attention page = padded state page)
  double cuda_graph_bytes = 0;         ///< estimate; lives in the memory above the budget
  double headroom_bytes = 0;           ///< gpu_memory_bytes - budget: CUDA context, CUDA graphs
  bool fits = false;                   ///< weights and reserves leave room for at least one KV block
};

/// The memory plan of `spec` at `precision` and tensor parallelism `tp` on `gpu`,
/// with resolved engine `settings`; a MoE model's routed experts split over `experts_over`
/// GPUs (expert_gpus(): the ep GPUs, or the tp x dp group; 0: `tp`), each GPU with NCCL
/// buffers for that group.
ServingMemory plan_memory(const ModelSpec& spec, const Precision& precision, int64_t tp, const GpuSpec& gpu,
                          const EngineSettings& settings, int64_t experts_over = 0);

/// Peak activation bytes of vLLM's profiling run on one GPU: the largest set of
/// tensors alive in one layer for `tokens` tokens (attention, dense MLP or fused
/// MoE), or the sampler's logits for `sequences` rows, whichever is larger.
double profile_activation_bytes(const ModelSpec& spec, int64_t tp, int64_t tokens, int64_t sequences);

/// Plain-language warnings when the model does not fit, or when `step_kv_tokens`
/// tokens (the KV a step's requests hold; 0: skip) exceed the KV cache.
std::vector<Warning> memory_warnings(const ServingMemory& memory, double step_kv_tokens);

}  // namespace stepcalc
