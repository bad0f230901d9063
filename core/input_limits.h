// Documented input limits (docs/INPUT.md): beyond them a request is refused with
// code "out_of_range" or "too_large" rather than answered slowly.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stepcalc::limits {

constexpr size_t kMaxDocumentBytes = 16u << 20;   ///< one JSON document
constexpr size_t kMaxJsonDepth = 64;              ///< nesting of a request document
constexpr int64_t kMaxRequestsPerStep = 65536;    ///< prefill + decode requests
constexpr int64_t kMaxTokens = 1000000000;        ///< progress_index, new tokens (each)
constexpr int64_t kMaxLayers = 10000;
constexpr int64_t kMaxHidden = 1000000;           ///< hidden_size, intermediate_size
constexpr int64_t kMaxIntermediate = 10000000;
constexpr int64_t kMaxHeads = 100000;
constexpr int64_t kMaxTp = 4096;
constexpr double kMaxBytesPerParam = 64;
constexpr size_t kMaxStringBytes = 1024;          ///< id, model_name, each tag
constexpr size_t kMaxTags = 64;
constexpr size_t kMaxBatch = 100000;              ///< requests in one JSON array
constexpr size_t kMaxSweepPoints = 100000;

}  // namespace stepcalc::limits
