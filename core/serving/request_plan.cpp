// SPDX-License-Identifier: Apache-2.0
#include "serving/request_plan.h"

#include <algorithm>
#include <cmath>

#include "serving/random.h"

namespace stepcalc {

int64_t planned_request_count(const Workload& w) {
  if (w.num_requests > 0) return w.num_requests;
  return std::max<int64_t>(32, 10 * w.concurrency);
}

int64_t draw_length(const LengthDistribution& d, SeededRandom* random) {
  using Kind = LengthDistribution::Kind;
  const int64_t lo = std::max<int64_t>(1, d.min);
  const int64_t hi = d.max > 0 ? std::max(d.max, lo) : INT64_MAX;
  double v = static_cast<double>(d.mean);
  switch (d.kind) {
    case Kind::kFixed:
      break;
    case Kind::kUniform:
      return random->uniform_int(lo, d.max > 0 ? hi : std::max(lo, d.mean));
    case Kind::kNormal:
      v = static_cast<double>(d.mean) + d.stddev * random->standard_normal();
      break;
    case Kind::kExponential:
      v = random->exponential(static_cast<double>(d.mean));
      break;
  }
  const double clamped = std::min(std::max(std::floor(v + 0.5), static_cast<double>(lo)), static_cast<double>(hi));
  return static_cast<int64_t>(clamped);
}

std::vector<PlannedRequest> plan_requests(const Workload& w, int64_t block_size) {
  const int64_t n = planned_request_count(w);
  std::vector<PlannedRequest> plan(static_cast<size_t>(n));
  SeededRandom random(w.seed);
  for (PlannedRequest& r : plan) {
    r.input_tokens = draw_length(w.input_tokens, &random);
    r.output_tokens = draw_length(w.output_tokens, &random);
    // The cached share of the prompt in whole blocks; vLLM always computes the last
    // prompt token itself, so a full hit still leaves one token to prefill.
    const double hit = w.prefix_cache_hit_ratio * static_cast<double>(r.input_tokens);
    int64_t cached = static_cast<int64_t>(std::floor(hit / static_cast<double>(block_size))) * block_size;
    r.cached_prefix_tokens = std::min(cached, ((r.input_tokens - 1) / block_size) * block_size);
  }
  if (w.concurrency == 0 && w.request_rate_per_s > 0) {
    const double mean_gap_us = 1e6 / w.request_rate_per_s;
    double t = 0;
    for (PlannedRequest& r : plan) {
      r.send_us = t;
      t += random.exponential(mean_gap_us);
    }
  }
  return plan;
}

}  // namespace stepcalc
