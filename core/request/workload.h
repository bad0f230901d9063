// SPDX-License-Identifier: Apache-2.0
// What a serving simulation is asked: the traffic (closed or open loop, request
// lengths, prefix reuse) and the engine settings vLLM would run with. Plain data;
// io/ fills it from JSON, serving/ validates and runs it.
#pragma once

#include <cstdint>
#include <string>

namespace stepcalc {

/// How the length of each request's prompt or output is drawn.
/// "fixed": every request `mean`; "uniform": whole numbers in [min, max];
/// "normal": mean +- stddev (sum of 12 uniforms, a deterministic normal
/// approximation), rounded and clamped to [min, max]; "exponential": mean `mean`,
/// rounded and clamped to [min, max].
struct LengthDistribution {
  enum class Kind : uint8_t { kFixed, kUniform, kNormal, kExponential };
  Kind kind = Kind::kFixed;
  int64_t mean = 0;
  int64_t min = 1;
  int64_t max = 0;  ///< 0: no upper clamp beyond the limits
  double stddev = 0;
};

/// The traffic. Closed loop (`concurrency` > 0): that many clients each send a
/// request, wait for its last token, then send the next; all start at t = 0 (and,
/// after a drained warm-up, again all at once).
/// Open loop (`request_rate_per_s` > 0): Poisson arrivals at that mean rate.
struct Workload {
  LengthDistribution input_tokens;
  LengthDistribution output_tokens;
  int64_t concurrency = 0;        ///< closed loop clients (0: open loop)
  double request_rate_per_s = 0;  ///< open loop mean arrival rate (0: closed loop)
  int64_t num_requests = 0;       ///< 0: closed loop 10 x concurrency, at least 32; open loop until the figures settle
  /// The first N requests issued: simulated, left out of every statistic. -1: the default,
  /// none, or a fifth of each pass when an open loop runs until it settles (num_requests 0).
  int64_t warmup_requests = -1;
  double prefix_cache_hit_ratio = 0;  ///< share of each prompt found in the prefix cache, [0, 1)
  uint64_t seed = 1;                  ///< lengths and arrivals are a function of the seed
  double api_overhead_us = -1;        ///< API-server time per request; negative: the fitted default
  /// Closed loop with a warm-up: the measured requests start only once every warm-up request
  /// has finished, all clients at once (a benchmark client's warm-up phase); false: each
  /// client goes straight on from its warm-up requests to the measured ones.
  bool warmup_drain = true;
};

/// The engine settings of `vllm serve` that shape scheduling and memory. A value of
/// 0 means "as vLLM defaults it on this GPU" (serving/engine_defaults.h).
struct EngineSettings {
  int64_t max_num_batched_tokens = 0;  ///< token budget of one step
  int64_t max_num_seqs = 0;            ///< requests running at once
  double gpu_memory_utilization = 0;   ///< share of GPU memory vLLM may use (default 0.9)
  int64_t block_size = 0;              ///< tokens per KV-cache block (default 16)
  bool enable_chunked_prefill = true;  ///< always on in vLLM V1
};

}  // namespace stepcalc
