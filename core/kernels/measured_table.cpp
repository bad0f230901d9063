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

namespace {

// Where x falls among the rows under `node`: row i (an exact match when `exact`), i == lo
// below the first point, i == hi beyond the last, else between rows i - 1 and i.
struct RowSpot {
  uint32_t i, lo, hi;
  bool exact;
};

RowSpot locate_rows(const MeasuredTable& t, uint32_t node, double x) {
  const int L = t.last_level();
  auto [lo, hi] = t.children(L - 1, node);
  const std::vector<int64_t>& xs = t.levels[L].value;
  auto it = std::lower_bound(xs.begin() + lo, xs.begin() + hi, x,
                             [](int64_t a, double b) { return static_cast<double>(a) < b; });
  const uint32_t i = static_cast<uint32_t>(it - xs.begin());
  return {i, lo, hi, i < hi && static_cast<double>(xs[i]) == x};
}

// The value at x of a located spot: every interpolate_rows and rows_us goes through here.
double rows_value(const MeasuredTable& t, const RowSpot& r, double x, BeyondRule rule,
                  const std::vector<double>& values) {
  const std::vector<int64_t>& xs = t.levels[t.last_level()].value;
  if (r.exact) return values[r.i];
  if (r.i == r.lo) return values[r.lo];
  if (r.i == r.hi) {
    const uint32_t last = r.hi - 1;
    const bool has_before = last > r.lo;
    return beyond(rule, x, has_before ? static_cast<double>(xs[last - 1]) : 0, has_before ? values[last - 1] : 0,
                  static_cast<double>(xs[last]), values[last], has_before);
  }
  return between(x, static_cast<double>(xs[r.i - 1]), values[r.i - 1], static_cast<double>(xs[r.i]), values[r.i]);
}

}  // namespace

Sample interpolate_rows(const MeasuredTable& t, uint32_t node, double x, BeyondRule rule,
                        const std::vector<double>& values) {
  const RowSpot r = locate_rows(t, node, x);
  const uint32_t i = r.i, lo = r.lo, hi = r.hi;
  Sample s;
  s.us = rows_value(t, r, x, rule, values);
  if (r.exact) {
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
    s.how = LookupHow::kClamped;
    s.add_cell(t.csv_row(lo));
    return s;
  }
  if (i == hi) {
    const uint32_t last = hi - 1;
    s.how = rule == BeyondRule::kClamp ? LookupHow::kClamped : LookupHow::kExtrapolated;
    if (last > lo && rule == BeyondRule::kLinear) s.add_cell(t.csv_row(last - 1));
    s.add_cell(t.csv_row(last));
    return s;
  }
  s.how = LookupHow::kInterpolated;
  s.add_cell(t.csv_row(i - 1));
  s.add_cell(t.csv_row(i));
  return s;
}

double rows_us(const MeasuredTable& t, uint32_t node, double x, BeyondRule rule, const std::vector<double>& values) {
  return rows_value(t, locate_rows(t, node, x), x, rule, values);
}

GridSpot locate_grid(const MeasuredTable& t, uint32_t node, double y) {
  const int d = t.last_level() - 1;  // level of y
  auto [lo, hi] = t.children(d - 1, node);
  const std::vector<int64_t>& ys = t.levels[d].value;
  auto it = std::lower_bound(ys.begin() + lo, ys.begin() + hi, y,
                             [](int64_t a, double b) { return static_cast<double>(a) < b; });
  const uint32_t i = static_cast<uint32_t>(it - ys.begin());
  GridSpot g;
  if (i < hi && static_cast<double>(ys[i]) == y) {
    g.row = i;
  } else if (i == lo) {
    g.kind = GridSpot::kBelow;
    g.row = lo;
  } else if (i == hi) {
    g.kind = GridSpot::kBeyond;
    g.row = hi - 1;
    g.has_before = g.row > lo;
    g.y0 = static_cast<double>(g.has_before ? ys[g.row - 1] : 0);
    g.y1 = static_cast<double>(ys[g.row]);
  } else {
    g.kind = GridSpot::kBetween;
    g.row = i;
    g.y0 = static_cast<double>(ys[i - 1]);
    g.y1 = static_cast<double>(ys[i]);
  }
  return g;
}

static double combine_grid(const GridSpot& g, double y, BeyondRule beyond_y, double before_us, double row_us) {
  if (g.kind == GridSpot::kBeyond) return beyond(beyond_y, y, g.y0, before_us, g.y1, row_us, g.has_before);
  if (g.kind == GridSpot::kBetween) return between(y, g.y0, before_us, g.y1, row_us);
  return row_us;
}

double grid_us(const MeasuredTable& t, const GridSpot& g, double y, double x, BeyondRule beyond_y,
               BeyondRule beyond_x) {
  const double row = rows_us(t, g.row, x, beyond_x, t.envelope_us);
  return combine_grid(g, y, beyond_y, grid_reads_before(g) ? rows_us(t, g.row - 1, x, beyond_x, t.envelope_us) : row,
                      row);
}

double grid_combine(const GridSpot& g, double y, BeyondRule beyond_y, double before_us, double row_us) {
  return combine_grid(g, y, beyond_y, before_us, row_us);
}

Sample interpolate_grid(const MeasuredTable& t, uint32_t node, double y, double x, BeyondRule beyond_y,
                        BeyondRule beyond_x) {
  const GridSpot g = locate_grid(t, node, y);
  if (g.kind == GridSpot::kBetween) {
    Sample s = interpolate_rows(t, g.row - 1, x, beyond_x, t.envelope_us);
    const Sample b = interpolate_rows(t, g.row, x, beyond_x, t.envelope_us);
    s.us = combine_grid(g, y, beyond_y, s.us, b.us);
    s.add_cells(b);
    s.worsen(LookupHow::kInterpolated);
    s.worsen(b.how);
    return s;
  }
  Sample s = interpolate_rows(t, g.row, x, beyond_x, t.envelope_us);
  if (g.kind == GridSpot::kExact) return s;
  if (g.kind == GridSpot::kBelow) {
    s.worsen(LookupHow::kClamped);
    return s;
  }
  const Sample before = g.has_before ? interpolate_rows(t, g.row - 1, x, beyond_x, t.envelope_us) : s;
  s.us = combine_grid(g, y, beyond_y, before.us, s.us);
  if (beyond_y == BeyondRule::kLinear && g.has_before) s.add_cells(before);
  s.worsen(beyond_y == BeyondRule::kClamp ? LookupHow::kClamped : LookupHow::kExtrapolated);
  s.worsen(before.how);
  return s;
}

}  // namespace stepcalc
