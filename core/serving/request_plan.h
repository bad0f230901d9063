// SPDX-License-Identifier: Apache-2.0
// The requests of a workload, drawn once before the simulation: each request's
// prompt and output length, its cached prefix, and (open loop) when it is sent.
// A pure function of the workload and its seed.
#pragma once

#include <cstdint>
#include <vector>

#include "request/workload.h"
#include "serving/random.h"

namespace stepcalc {

/// One request as the client sends it.
struct PlannedRequest {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cached_prefix_tokens = 0;  ///< found in the prefix cache: whole blocks, at most input - 1
  double send_us = 0;                ///< open loop: Poisson send time; closed loop: set by the simulation
};

/// The number of requests a workload sends: `num_requests`, or 10 x concurrency
/// (at least 32) when it is 0.
int64_t planned_request_count(const Workload& w);

/// Draws every request. Lengths first (input then output, request by request), then
/// the open-loop arrival gaps, from one seeded stream, so the lengths of a seed do
/// not depend on whether the loop is open or closed.
std::vector<PlannedRequest> plan_requests(const Workload& w, int64_t block_size);

/// One draw from a length distribution (clamped to [max(1, d.min), d.max or no limit]).
int64_t draw_length(const LengthDistribution& d, SeededRandom* random);

}  // namespace stepcalc
