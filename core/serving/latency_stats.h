// SPDX-License-Identifier: Apache-2.0
// Summary statistics of latencies, as serving benchmarks report them: the mean and
// the 50th, 90th and 99th percentiles, percentiles interpolated linearly between
// the two nearest ranks (NumPy's default, which `vllm bench serve` uses).
#pragma once

#include <cstdint>
#include <vector>

#include "serving/scheduler.h"

namespace stepcalc {

struct LatencyStats {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
  int64_t count = 0;
};

/// Statistics of `values` (reordered in place). Empty: all zero.
LatencyStats summarize_latencies(std::vector<double>* values);

/// Statistics of gap runs (`count` copies of `gap_us` each), as if expanded, scaled
/// by `scale` (e.g. 1e-3 for milliseconds). Reorders `runs`.
LatencyStats summarize_runs(std::vector<GapRun>* runs, double scale);

}  // namespace stepcalc
