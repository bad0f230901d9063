// SPDX-License-Identifier: Apache-2.0
// Decoding of the packed table blob.
// The blob is written by tools/pack-tables.mjs; its layout is in docs/TABLES.md.
#include <cmath>
#include <cstdlib>
#include <string>

#include "kernels/reference/mfu_tables.h"

namespace stepcalc {
namespace {

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool failed() const { return failed_; }

  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= size_) return fail();
      const uint8_t byte = data_[pos_++];
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return fail();
  }
  int64_t zigzag() {
    const uint64_t v = varint();
    return (v & 1) ? -static_cast<int64_t>(v >> 1) - 1 : static_cast<int64_t>(v >> 1);
  }
  uint8_t byte() {
    if (pos_ >= size_) return static_cast<uint8_t>(fail());
    return data_[pos_++];
  }
  std::string text() {
    const uint64_t length = varint();
    if (failed_ || length > size_ - pos_) return fail(), std::string();
    std::string out(reinterpret_cast<const char*>(data_ + pos_), length);
    pos_ += length;
    return out;
  }
  bool at_end() const { return pos_ == size_; }

 private:
  uint64_t fail() {
    failed_ = true;
    pos_ = size_;
    return 0;
  }
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool failed_ = false;
};

constexpr uint64_t kMaxRows = 1u << 20;
constexpr uint64_t kMaxColumns = 64;
constexpr uint64_t kMaxGridCells = 1u << 22;

enum Kind : uint8_t { kDelta = 0, kText = 1, kDict = 2, kSeries = 3, kRatio = 4, kGrid = 5 };

/// 10^n by repeated multiplication, exactly as the packer computes it.
double pow10(int n) {
  double p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

/// floor(x + 0.5) within the safe integer range, else 0 (as the packer rounds).
int64_t round_half_up(double x) {
  return std::isfinite(x) && std::fabs(x) < 4503599627370496.0 ? static_cast<int64_t>(std::floor(x + 0.5)) : 0;
}

Error corrupt(const std::string& what) {
  return make_error("corrupt_tables", "", "The embedded MFU tables are corrupt: " + what + ".");
}

/// A numeric column as the packer sees it: scaled integers and their doubles.
struct IntColumn {
  int scale = 0;
  std::vector<int64_t> ints;
};

/// What a column's header says; its row data comes later, in payload order.
struct ColumnPlan {
  uint8_t kind = kDelta;
  int scale = 0;
  std::vector<int64_t> dict;
  uint64_t axis = 0, latency = 0, top_row = 0;
  int64_t top_value = 0;
  std::vector<uint64_t> refs;  ///< series keys or ratio factors (column indices)
  int rank() const { return kind == kSeries ? 1 : kind == kRatio ? 2 : 0; }
};

struct TablePlan {
  RawTable table;
  std::vector<ColumnPlan> plans;
  std::vector<IntColumn> ints;
};

bool valid_ref(uint64_t ref, uint64_t column, const TablePlan& t) {
  return ref < column && !t.table.columns[ref].is_text;
}

bool read_plan(Reader& in, TablePlan& t, uint64_t c, ColumnPlan* plan) {
  plan->kind = in.byte();
  if (plan->kind == kText || plan->kind == kGrid) return true;
  plan->scale = in.byte();
  if (plan->scale > 15) return false;
  switch (plan->kind) {
    case kDelta:
      return true;
    case kDict: {
      const uint64_t entries = in.varint();
      if (entries > t.table.num_rows + 1) return false;
      int64_t v = 0;
      for (uint64_t i = 0; i < entries && !in.failed(); ++i) plan->dict.push_back(v += in.zigzag());
      return true;
    }
    case kSeries: {
      plan->axis = in.varint();
      const uint64_t keys = in.varint();
      if (keys > c) return false;
      for (uint64_t i = 0; i < keys && !in.failed(); ++i) plan->refs.push_back(in.varint());
      if (!valid_ref(plan->axis, c, t)) return false;
      for (uint64_t k : plan->refs)
        if (!valid_ref(k, c, t)) return false;
      return true;
    }
    case kRatio: {
      plan->latency = in.varint();
      const uint64_t factors = in.varint();
      if (factors > 8) return false;
      for (uint64_t i = 0; i < factors && !in.failed(); ++i) plan->refs.push_back(in.varint());
      plan->top_row = in.varint();
      plan->top_value = static_cast<int64_t>(in.varint());
      if (!valid_ref(plan->latency, c, t) || plan->top_row >= t.table.num_rows) return false;
      for (uint64_t f : plan->refs)
        if (!valid_ref(f, c, t)) return false;
      return true;
    }
    default:
      return false;
  }
}

/// Reads a table's grid: axes of its key columns and one presence bit per cell, the
/// present cells listed in lexicographic order give the rows.
bool read_grid(Reader& in, TablePlan& t) {
  const uint64_t count = in.varint();
  if (count > t.table.columns.size()) return false;
  std::vector<uint64_t> order;
  std::vector<std::vector<int64_t>> axes;
  uint64_t cells = 1;
  for (uint64_t g = 0; g < count && !in.failed(); ++g) {
    const uint64_t c = in.varint();
    if (c >= t.table.columns.size()) return false;
    t.ints[c].scale = in.byte();
    if (t.ints[c].scale > 15) return false;
    const uint64_t size = in.varint();
    if (size == 0 || size > kMaxRows) return false;
    std::vector<int64_t> axis;
    int64_t v = 0;
    for (uint64_t i = 0; i < size && !in.failed(); ++i) axis.push_back(v += in.zigzag());
    cells *= size;
    if (cells > kMaxGridCells) return false;
    order.push_back(c);
    axes.push_back(std::move(axis));
  }
  if (count == 0 || in.failed()) return !in.failed();
  std::vector<size_t> index(count, 0);
  uint8_t bits = 0;
  for (uint64_t cell = 0; cell < cells; ++cell) {
    if (cell % 8 == 0) bits = in.byte();
    if (in.failed()) return false;
    if (bits >> (cell % 8) & 1) {
      for (uint64_t g = 0; g < count; ++g) t.ints[order[g]].ints.push_back(axes[g][index[g]]);
    }
    for (uint64_t g = count; g-- > 0;) {  // odometer, last key fastest
      if (++index[g] < axes[g].size()) break;
      index[g] = 0;
    }
  }
  for (uint64_t c : order)
    if (t.ints[c].ints.size() != t.table.num_rows) return false;
  return true;
}

double value_at(const TablePlan& t, uint64_t column, size_t row) { return t.table.columns[column].values[row]; }

/// Decodes one column's rows from its payload; referenced columns are decoded already.
bool read_rows(Reader& in, TablePlan& t, uint64_t c) {
  const ColumnPlan& plan = t.plans[c];
  IntColumn& out = t.ints[c];
  out.scale = plan.scale;
  const size_t rows = t.table.num_rows;
  double ratio_peak = 0;
  if (plan.kind == kRatio) {
    double work = 1;
    for (uint64_t f : plan.refs) work = work * value_at(t, f, plan.top_row);
    ratio_peak =
        work / value_at(t, plan.latency, plan.top_row) / (static_cast<double>(plan.top_value) / pow10(plan.scale));
  }
  int64_t v = 0;
  for (size_t r = 0; r < rows && !in.failed(); ++r) {
    switch (plan.kind) {
      case kDelta:
        v += in.zigzag();
        break;
      case kDict: {
        const uint64_t i = in.varint();
        if (i >= plan.dict.size()) return false;
        v = plan.dict[i];
        break;
      }
      case kSeries: {
        const std::vector<int64_t>& y = out.ints;
        auto same = [&](size_t a, size_t b) {
          for (uint64_t k : plan.refs)
            if (t.ints[k].ints[a] != t.ints[k].ints[b]) return false;
          return true;
        };
        int64_t predicted = 0;
        const double x2 = value_at(t, plan.axis, r);
        if (r >= 2 && same(r, r - 1) && same(r, r - 2) &&
            value_at(t, plan.axis, r - 1) != value_at(t, plan.axis, r - 2)) {
          const double x1 = value_at(t, plan.axis, r - 1), x0 = value_at(t, plan.axis, r - 2);
          const double y1 = static_cast<double>(y[r - 1]), y0 = static_cast<double>(y[r - 2]);
          predicted = round_half_up(y1 + (y1 - y0) * (x2 - x1) / (x1 - x0));
        } else if (r >= 1 && same(r, r - 1) && value_at(t, plan.axis, r - 1) != 0) {
          predicted = round_half_up(static_cast<double>(y[r - 1]) * x2 / value_at(t, plan.axis, r - 1));
        }
        v = predicted + in.zigzag();
        break;
      }
      case kRatio: {
        double work = 1;
        for (uint64_t f : plan.refs) work = work * value_at(t, f, r);
        v = round_half_up(work / value_at(t, plan.latency, r) / ratio_peak * pow10(plan.scale)) + in.zigzag();
        break;
      }
      default:
        return false;
    }
    out.ints.push_back(v);
  }
  return !in.failed();
}

void fill_values(TablePlan& t, uint64_t c) {
  RawColumn& column = t.table.columns[c];
  const double p = pow10(t.ints[c].scale);
  column.values.clear();
  for (int64_t v : t.ints[c].ints) column.values.push_back(static_cast<double>(v) / p);
}

}  // namespace

const RawColumn* RawTable::column(const std::string& column_name) const {
  for (const RawColumn& c : columns)
    if (c.name == column_name) return &c;
  return nullptr;
}

Expected<std::vector<RawTable>> unpack_tables(const uint8_t* data, size_t size) {
  if (size < 4 || std::string(reinterpret_cast<const char*>(data), 4) != "SCT4") return corrupt("bad magic");
  Reader in(data + 4, size - 4);
  const uint64_t schema_count = in.varint();
  if (schema_count > 4096) return corrupt("schema count");
  std::vector<std::vector<std::string>> schemas(schema_count);
  for (auto& names : schemas) {
    const uint64_t columns = in.varint();
    if (columns > kMaxColumns || in.failed()) return corrupt("schema size");
    for (uint64_t c = 0; c < columns && !in.failed(); ++c) names.push_back(in.text());
  }
  const uint64_t count = in.varint();
  if (count > 4096) return corrupt("table count");
  std::vector<TablePlan> tables;
  for (uint64_t t = 0; t < count && !in.failed(); ++t) {
    TablePlan plan;
    plan.table.name = in.text();
    const uint64_t schema = in.varint();
    const uint64_t rows = in.varint();
    if (schema >= schemas.size() || rows > kMaxRows) return corrupt("table size");
    const uint64_t columns = schemas[schema].size();
    plan.table.num_rows = rows;
    plan.table.columns.resize(columns);
    plan.plans.resize(columns);
    plan.ints.resize(columns);
    if (!read_grid(in, plan)) return corrupt("grid of " + plan.table.name);
    for (uint64_t c = 0; c < columns && !in.failed(); ++c) {
      RawColumn& column = plan.table.columns[c];
      column.name = schemas[schema][c];
      if (!read_plan(in, plan, c, &plan.plans[c])) return corrupt("column header in " + plan.table.name);
      const uint8_t kind = plan.plans[c].kind;
      column.is_text = kind == kText;
      if (kind == kText) column.text = in.text();
      if (kind == kGrid) {
        if (plan.ints[c].ints.size() != rows) return corrupt("grid column in " + plan.table.name);
        fill_values(plan, c);
      }
    }
    tables.push_back(std::move(plan));
  }
  // Payloads by rank (keys, kernel times, MFUs), then table, then column.
  for (int rank = 0; rank < 3 && !in.failed(); ++rank) {
    for (TablePlan& t : tables) {
      for (uint64_t c = 0; c < t.plans.size(); ++c) {
        const uint8_t kind = t.plans[c].kind;
        if (kind == kText || kind == kGrid || t.plans[c].rank() != rank) continue;
        if (!read_rows(in, t, c)) return corrupt("rows of " + t.table.name);
        fill_values(t, c);
      }
    }
  }
  if (in.failed() || !in.at_end()) return corrupt("truncated or trailing data");
  std::vector<RawTable> out;
  for (TablePlan& t : tables) out.push_back(std::move(t.table));
  return out;
}

}  // namespace stepcalc
