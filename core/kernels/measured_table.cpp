// SPDX-License-Identifier: Apache-2.0
// The trie navigation and the 1-D / 2-D interpolation shared by every lookup.
#include "kernels/measured_table.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace stepcalc {

std::pair<uint32_t, uint32_t> MeasuredTable::children(int d, uint32_t node) const {
  if (d < 0) return {0, static_cast<uint32_t>(levels[0].value.size())};
  return {levels[d].begin[node], levels[d].begin[node + 1]};
}

int64_t MeasuredTable::find_child(int d, uint32_t node, int64_t v) const {
  auto [lo, hi] = children(d, node);
  const std::vector<int64_t>& values = levels[d + 1].value;
  auto it = std::lower_bound(values.begin() + lo, values.begin() + hi, v);
  return it != values.begin() + hi && *it == v ? it - values.begin() : -1;
}

uint32_t MeasuredTable::nearest_top(int64_t v) const {
  const int64_t exact = find_child(-1, 0, v);
  if (exact >= 0) return static_cast<uint32_t>(exact);
  uint32_t nearest = 0;
  double best = std::numeric_limits<double>::infinity();
  for (uint32_t i = 0; i < levels[0].value.size(); ++i) {
    const double d = std::fabs(std::log(static_cast<double>(levels[0].value[i]) / static_cast<double>(v)));
    if (d < best) best = d, nearest = i;
  }
  return nearest;
}

std::vector<int64_t> child_values(const MeasuredTable& t, int d, uint32_t node) {
  auto [lo, hi] = t.children(d, node);
  return std::vector<int64_t>(t.levels[d + 1].value.begin() + lo, t.levels[d + 1].value.begin() + hi);
}

void Sample::add_cell(int32_t row) {
  for (int32_t& c : cells) {
    if (c == row) return;
    if (c < 0) {
      c = row;
      return;
    }
  }
}

void Sample::add_cells(const Sample& other) {
  for (int32_t c : other.cells) {
    if (c >= 0) add_cell(c);
  }
}

namespace {

// Continues past the last point (x1, v1) with (x0, v0) the one before (if any).
double beyond(BeyondRule rule, double x, double x0, double v0, double x1, double v1, bool has_before) {
  switch (rule) {
    case BeyondRule::kClamp:
      return v1;
    case BeyondRule::kProportional:
      return v1 * (x / x1);
    case BeyondRule::kQuadratic:
      return v1 * (x / x1) * (x / x1);
    case BeyondRule::kLinear:
      if (!has_before || x1 <= x0) return v1;
      return std::max(v1, v1 + (v1 - v0) * (x - x1) / (x1 - x0));
  }
  return v1;
}

// Linear between (x0, v0) and (x1, v1); exactly v0 at x0 and v1 at x1.
double between(double x, double x0, double v0, double x1, double v1) {
  if (x == x0) return v0;
  if (x == x1) return v1;
  return v0 + (v1 - v0) * ((x - x0) / (x1 - x0));
}

}  // namespace

Sample interpolate_rows(const MeasuredTable& t, uint32_t node, double x, BeyondRule rule,
                        const std::vector<double>& values) {
  const int L = t.last_level();
  auto [lo, hi] = t.children(L - 1, node);
  const std::vector<int64_t>& xs = t.levels[L].value;
  Sample s;
  auto it = std::lower_bound(xs.begin() + lo, xs.begin() + hi, x,
                             [](int64_t a, double b) { return static_cast<double>(a) < b; });
  const uint32_t i = static_cast<uint32_t>(it - xs.begin());
  if (i < hi && static_cast<double>(xs[i]) == x) {
    s.us = values[i];
    s.add_cell(t.csv_row(i));
    if (values[i] != t.latency_us[i]) {
      // The envelope's value came from a larger m: name that cell too.
      s.how = LookupHow::kEnvelope;
      for (uint32_t k = i + 1; k < hi; ++k) {
        if (t.latency_us[k] == values[i]) {
          s.add_cell(t.csv_row(k));
          break;
        }
      }
    }
    return s;
  }
  if (i == lo) {
    s.us = values[lo];
    s.how = LookupHow::kClamped;
    s.add_cell(t.csv_row(lo));
    return s;
  }
  if (i == hi) {
    const uint32_t last = hi - 1;
    const bool has_before = last > lo;
    s.us = beyond(rule, x, has_before ? static_cast<double>(xs[last - 1]) : 0, has_before ? values[last - 1] : 0,
                  static_cast<double>(xs[last]), values[last], has_before);
    s.how = rule == BeyondRule::kClamp ? LookupHow::kClamped : LookupHow::kExtrapolated;
    if (has_before && rule == BeyondRule::kLinear) s.add_cell(t.csv_row(last - 1));
    s.add_cell(t.csv_row(last));
    return s;
  }
  s.us = between(x, static_cast<double>(xs[i - 1]), values[i - 1], static_cast<double>(xs[i]), values[i]);
  s.how = LookupHow::kInterpolated;
  s.add_cell(t.csv_row(i - 1));
  s.add_cell(t.csv_row(i));
  return s;
}

Sample interpolate_grid(const MeasuredTable& t, uint32_t node, double y, double x, BeyondRule beyond_y,
                        BeyondRule beyond_x) {
  const int d = t.last_level() - 1;  // level of y
  auto [lo, hi] = t.children(d - 1, node);
  const std::vector<int64_t>& ys = t.levels[d].value;
  const std::vector<double>& values = t.latency_us;
  auto it = std::lower_bound(ys.begin() + lo, ys.begin() + hi, y,
                             [](int64_t a, double b) { return static_cast<double>(a) < b; });
  const uint32_t i = static_cast<uint32_t>(it - ys.begin());
  if (i < hi && static_cast<double>(ys[i]) == y) return interpolate_rows(t, i, x, beyond_x, values);
  if (i == lo || i == hi) {
    const uint32_t edge = i == lo ? lo : hi - 1;
    Sample s = interpolate_rows(t, edge, x, beyond_x, values);
    if (i == lo) {
      s.worsen(LookupHow::kClamped);
      return s;
    }
    const bool has_before = edge > lo;
    Sample before = has_before ? interpolate_rows(t, edge - 1, x, beyond_x, values) : s;
    s.us = beyond(beyond_y, y, static_cast<double>(has_before ? ys[edge - 1] : 0), before.us,
                  static_cast<double>(ys[edge]), s.us, has_before);
    if (beyond_y == BeyondRule::kLinear && has_before) s.add_cells(before);
    s.worsen(beyond_y == BeyondRule::kClamp ? LookupHow::kClamped : LookupHow::kExtrapolated);
    if (lookup_how_rank(before.how) > lookup_how_rank(s.how)) s.how = before.how;
    return s;
  }
  Sample a = interpolate_rows(t, i - 1, x, beyond_x, values);
  Sample b = interpolate_rows(t, i, x, beyond_x, values);
  Sample s = a;
  s.us = between(y, static_cast<double>(ys[i - 1]), a.us, static_cast<double>(ys[i]), b.us);
  s.add_cells(b);
  s.worsen(LookupHow::kInterpolated);
  if (lookup_how_rank(b.how) > lookup_how_rank(s.how)) s.how = b.how;
  return s;
}

}  // namespace stepcalc
