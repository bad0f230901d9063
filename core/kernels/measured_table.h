// SPDX-License-Identifier: Apache-2.0
// One measured kernel table as decoded from a pack: its key columns as a trie (one
// level per column, in the CSV's sort order) and one latency per row, plus the 1-D and
// 2-D interpolation the lookups share. Internal to core/kernels/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel_db.h"

namespace stepcalc {

struct MeasuredTable {
  KernelTable kind = KernelTable::kNone;
  KernelDtype dtype = KernelDtype::kBf16;
  std::string csv;                ///< CSV file name without ".csv", e.g. "gemm"
  uint32_t first_row = 0;         ///< index of this table's first row among the CSV's data rows
  std::vector<std::string> keys;  ///< key column names (the dtype column is the table's dtype)

  /// Level d holds one entry per distinct key prefix of length d+1: its last value,
  /// its parent entry at level d-1, and (all but the last level) where its children
  /// begin at level d+1 (`begin` has one extra entry, the end). The last level's
  /// entries are the rows.
  struct Level {
    std::vector<int64_t> value;
    std::vector<uint32_t> parent;
    std::vector<uint32_t> begin;
  };
  std::vector<Level> levels;
  std::vector<double> latency_us;   ///< per row
  std::vector<double> envelope_us;  ///< per row, the least latency at this or any later value of the last level

  int last_level() const { return static_cast<int>(levels.size()) - 1; }
  /// Children of `node` at level d (d = -1: the root's, i.e. level 0): [first, second).
  std::pair<uint32_t, uint32_t> children(int d, uint32_t node) const;
  /// The child of `node` (level d) whose value is `v`, or -1.
  int64_t find_child(int d, uint32_t node, int64_t v) const;
  /// The level-0 entry whose value is `v`, else the one nearest to it in ratio (smallest
  /// |log(value / v)|, the first on a tie). The table must have a level-0 entry.
  uint32_t nearest_top(int64_t v) const;
  /// CSV data-row index of row `leaf`.
  int32_t csv_row(uint32_t leaf) const { return static_cast<int32_t>(first_row + leaf); }
};

/// How a lookup beyond the last measured point of an axis continues.
enum class BeyondRule : uint8_t {
  kClamp,         ///< the edge value
  kLinear,        ///< the line through the last two points, never below the edge value
  kProportional,  ///< the edge value times x / x_edge
  kQuadratic      ///< the edge value times (x / x_edge)^2
};

/// A value interpolated from cells, with its provenance.
struct Sample {
  double us = 0;
  LookupHow how = LookupHow::kExact;
  int32_t cells[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
  void add_cell(int32_t row);
  void add_cells(const Sample& other);
  void worsen(LookupHow h) {
    if (lookup_how_rank(h) > lookup_how_rank(how)) how = h;
  }
};

/// Piecewise-linear in x over the rows under `node` (the last level's parent level);
/// below the first point the first value (clamped), beyond the last by `beyond`.
/// `values` is latency_us or envelope_us.
Sample interpolate_rows(const MeasuredTable& t, uint32_t node, double x, BeyondRule beyond,
                        const std::vector<double>& values);

/// Bilinear: linear in y over the children of `node` (two levels above the rows),
/// each child interpolated in x by interpolate_rows. `beyond_y` for y past the last child.
Sample interpolate_grid(const MeasuredTable& t, uint32_t node, double y, double x, BeyondRule beyond_y,
                        BeyondRule beyond_x);

/// interpolate_rows' value alone (the same double), without the cells it came from.
double rows_us(const MeasuredTable& t, uint32_t node, double x, BeyondRule rule, const std::vector<double>& values);

/// Where y falls among the children of `node` (two levels above the rows).
GridSpot locate_grid(const MeasuredTable& t, uint32_t node, double y);
/// interpolate_grid's value at (y, x) for y located once: lookups at one y and many x.
double grid_us(const MeasuredTable& t, const GridSpot& g, double y, double x, BeyondRule beyond_y, BeyondRule beyond_x);

/// Whether grid_us at `g` reads the row before g.row too.
inline bool grid_reads_before(const GridSpot& g) {
  return g.kind == GridSpot::kBetween || (g.kind == GridSpot::kBeyond && g.has_before);
}
/// grid_us from its rows' values at x: `row_us` under g.row, `before_us` under g.row - 1
/// (read when grid_reads_before(g)), each rows_us(t, node, x, beyond_x, t.envelope_us).
double grid_combine(const GridSpot& g, double y, BeyondRule beyond_y, double before_us, double row_us);

/// The measured key values of level d under `node`, for coverage and nearest-shape choices.
std::vector<int64_t> child_values(const MeasuredTable& t, int d, uint32_t node);

}  // namespace stepcalc
