// SPDX-License-Identifier: Apache-2.0
// Documented input limits (docs/INPUT.md): beyond them a request is refused with a
// clear error ("too_large", "too_deep", "too_many_requests", "out_of_range") rather
// than answered slowly, with a denormal, or with an infinity.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stepcalc::limits {

constexpr size_t kMaxDocumentBytes = 16u << 20;    ///< one JSON document (too_large)
constexpr size_t kMaxKernelPackBytes = 16u << 20;  ///< one kernel pack file the CLI reads (too_large)
constexpr size_t kMaxJsonDepth = 64;               ///< nesting of a request document (too_deep)
constexpr size_t kMaxConfigDepth = 256;            ///< nesting of a config.json given alone (too_deep)
constexpr int64_t kMaxRequestsPerStep = 65536;     ///< prefill + decode requests (too_many_requests)
constexpr int64_t kMaxTokens = 1000000000;         ///< progress_index, new tokens (each)
constexpr int64_t kMaxLayers = 10000;
constexpr int64_t kMaxHidden = 1000000;  ///< hidden_size, head_dim
constexpr int64_t kMaxIntermediate = 10000000;
constexpr int64_t kMaxHeads = 100000;
constexpr int64_t kMaxExperts = 100000;  ///< routed experts and top-k of a MoE config
constexpr int64_t kMaxVocab = INT64_C(1) << 40;
constexpr int64_t kMaxTp = 4096;
constexpr double kMaxBytesPerParam = 64;
constexpr double kMinTflopsPeak = 1e-3;  ///< hardware.TFlopsPeak, TFLOP/s
constexpr double kMaxTflopsPeak = 1e6;
constexpr double kMinBwPeakTBs = 1e-3;  ///< hardware.BwPeakTBs, TB/s
constexpr double kMaxBwPeakTBs = 1e4;
constexpr double kMaxPerLayerOverheadUs = 1e6;  ///< hardware.perLayerOverhead, us per layer
constexpr size_t kMaxStringBytes = 1024;        ///< id, model_name, each tag
constexpr size_t kMaxTags = 64;
constexpr size_t kMaxEchoBytes = 64;           ///< user text (a key, a name) quoted in an error message
constexpr size_t kMaxBatch = 10000;            ///< requests in one JSON array (too_many_requests)
constexpr size_t kMaxResultBytes = 64u << 20;  ///< result JSON of one document (too_large)
constexpr size_t kMaxSweepPoints = 100000;
constexpr int64_t kMaxSweepRequests = 1 << 22;  ///< requests priced over all points of a sweep

// Serving estimates (`stepcalc serve`): bounded so one simulation stays within
// seconds in the browser and its per-request arrays within a few megabytes.
constexpr int64_t kMaxServeRequests = 100000;           ///< workload.num_requests
constexpr int64_t kMaxServeConcurrency = 10000;         ///< workload.concurrency (clients)
constexpr int64_t kMaxServeTokensPerRequest = 1000000;  ///< input or output tokens of one request
constexpr double kMaxServeRequestRate = 1e6;            ///< workload.request_rate, requests per second
constexpr int64_t kMaxServeSteps = 2000000;             ///< engine steps one simulation may take
/// Work one simulation may take (serving/scheduler.h serve_work_units: a step, plus a seventh
/// per request in it): the ledger's largest runs (6,144 requests of 8,192 output tokens at 512
/// clients) take 7.3 million; the native time of the costliest serves at the bound, per mode,
/// is in BENCHMARKS.md ("Serving simulation"), issue 27's budget one second.
constexpr double kMaxServeWork = 8e6;
constexpr int64_t kMaxBatchedTokens = 1048576;  ///< engine.max_num_batched_tokens
constexpr double kMaxGpuHourUsd = 1e6;          ///< gpu_hour_usd
constexpr double kMaxApiOverheadMs = 60000;     ///< workload.api_overhead_ms

}  // namespace stepcalc::limits
