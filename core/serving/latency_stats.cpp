// SPDX-License-Identifier: Apache-2.0
#include "serving/latency_stats.h"

#include <algorithm>
#include <cmath>

#include "base/index_sort.h"

namespace stepcalc {
namespace {

/// The value at fractional rank `q` (0..n-1) of a sorted sequence given by `at`.
template <typename At>
double at_rank(double q, int64_t n, const At& at) {
  const double lo = std::floor(q);
  const int64_t i = static_cast<int64_t>(lo);
  const double a = at(i);
  if (i + 1 >= n) return a;
  return a + (at(i + 1) - a) * (q - lo);
}

bool gap_before(const GapRun& a, const GapRun& b) {
  return a.gap_us < b.gap_us || (a.gap_us == b.gap_us && a.count < b.count);
}

}  // namespace

LatencyStats summarize_latencies(std::vector<double>* values) {
  LatencyStats s;
  const int64_t n = static_cast<int64_t>(values->size());
  if (n == 0) return s;
  std::sort(values->begin(), values->end());
  double sum = 0;
  for (double v : *values) sum += v;
  s.count = n;
  s.mean = sum / static_cast<double>(n);
  const auto at = [values](int64_t i) { return (*values)[static_cast<size_t>(i)]; };
  s.p50 = at_rank(0.50 * static_cast<double>(n - 1), n, at);
  s.p90 = at_rank(0.90 * static_cast<double>(n - 1), n, at);
  s.p99 = at_rank(0.99 * static_cast<double>(n - 1), n, at);
  return s;
}

LatencyStats summarize_runs(std::vector<GapRun>* runs, double scale) {
  LatencyStats s;
  // A total order (gap, then count): equal gaps with different counts otherwise land in an
  // order the sort implementation picks, and the sum below, so the mean's last bits, would
  // differ between the native build and Wasm. Wasm sorts through the module's one index sort
  // (base/index_sort.h, the first view's bytes); natively an indirect call per comparison
  // would cost a long simulation's gaps a tenth of its time.
#if defined(__EMSCRIPTEN__)
  const std::vector<uint32_t> order =
      sorted_indices(runs->size(), runs->data(), [](const void* context, uint32_t a, uint32_t b) {
        const auto* r = static_cast<const GapRun*>(context);
        return gap_before(r[a], r[b]);
      });
  std::vector<GapRun> sorted(runs->size());
  for (size_t i = 0; i < order.size(); ++i) sorted[i] = (*runs)[order[i]];
  runs->swap(sorted);
#else
  std::sort(runs->begin(), runs->end(), [](const GapRun& a, const GapRun& b) { return gap_before(a, b); });
#endif
  int64_t n = 0;
  double sum = 0;
  for (const GapRun& r : *runs) {
    n += r.count;
    sum += r.gap_us * static_cast<double>(r.count);
  }
  if (n == 0) return s;
  s.count = n;
  s.mean = sum / static_cast<double>(n) * scale;
  // The value at expanded index i: walk the cumulative counts (3 lookups, so linear).
  const auto at = [runs, scale](int64_t i) {
    int64_t seen = 0;
    for (const GapRun& r : *runs) {
      seen += r.count;
      if (i < seen) return r.gap_us * scale;
    }
    return runs->back().gap_us * scale;
  };
  s.p50 = at_rank(0.50 * static_cast<double>(n - 1), n, at);
  s.p90 = at_rank(0.90 * static_cast<double>(n - 1), n, at);
  s.p99 = at_rank(0.99 * static_cast<double>(n - 1), n, at);
  return s;
}

}  // namespace stepcalc
