// Decoding of the packed table blob and reading of bench_data CSV text.
// Blob layout (written by tools/pack-tables.mjs, described in docs/TABLES.md):
//   "SCT1", varint table count, then per table: text name, varint columns,
//   varint rows, then per column: text name, kind byte and its payload:
//   kind 1 = constant text; kind 0 = decimal scale byte + row deltas (zigzag);
//   kind 2 = decimal scale byte + sorted dictionary (count, zigzag deltas) + one
//   index per row. Numbers are integer / 10^scale.
#include <cmath>
#include <cstdlib>
#include <string>

#include "tables.h"

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

double scaled(int64_t value, int scale) {
  return static_cast<double>(value) / std::pow(10.0, scale);
}

Error corrupt(const std::string& what) {
  return make_error("corrupt_tables", "", "The embedded MFU tables are corrupt: " + what + ".");
}

}  // namespace

const RawColumn* RawTable::column(const std::string& column_name) const {
  for (const RawColumn& c : columns)
    if (c.name == column_name) return &c;
  return nullptr;
}

Expected<std::vector<RawTable>> unpack_tables(const uint8_t* data, size_t size) {
  if (size < 4 || std::string(reinterpret_cast<const char*>(data), 4) != "SCT1")
    return corrupt("bad magic");
  Reader in(data + 4, size - 4);
  const uint64_t count = in.varint();
  if (count > 4096) return corrupt("table count");
  std::vector<RawTable> tables;
  for (uint64_t t = 0; t < count && !in.failed(); ++t) {
    RawTable table;
    table.name = in.text();
    const uint64_t columns = in.varint();
    const uint64_t rows = in.varint();
    if (columns > kMaxColumns || rows > kMaxRows) return corrupt("table size");
    table.num_rows = rows;
    for (uint64_t c = 0; c < columns && !in.failed(); ++c) {
      RawColumn column;
      column.name = in.text();
      const uint8_t kind = in.byte();
      if (kind == 1) {
        column.is_text = true;
        column.text = in.text();
      } else if (kind == 0 || kind == 2) {
        const int scale = in.byte();
        if (scale > 15) return corrupt("decimal scale");
        std::vector<int64_t> dict;
        if (kind == 2) {
          const uint64_t entries = in.varint();
          if (entries > rows) return corrupt("dictionary size");
          int64_t value = 0;
          for (uint64_t i = 0; i < entries && !in.failed(); ++i) dict.push_back(value += in.zigzag());
        }
        int64_t value = 0;
        for (uint64_t r = 0; r < rows && !in.failed(); ++r) {
          if (kind == 2) {
            const uint64_t index = in.varint();
            if (index >= dict.size()) return corrupt("dictionary index");
            value = dict[index];
          } else {
            value += in.zigzag();
          }
          column.values.push_back(scaled(value, scale));
        }
      } else {
        return corrupt("column kind");
      }
      table.columns.push_back(std::move(column));
    }
    tables.push_back(std::move(table));
  }
  if (in.failed() || !in.at_end()) return corrupt("truncated or trailing data");
  return tables;
}

Expected<RawTable> parse_csv_table(const std::string& name, const std::string& text) {
  std::vector<std::vector<std::string>> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) {
      std::vector<std::string> fields;
      size_t from = 0;
      for (size_t comma; (comma = line.find(',', from)) != std::string::npos; from = comma + 1)
        fields.push_back(line.substr(from, comma - from));
      fields.push_back(line.substr(from));
      lines.push_back(std::move(fields));
    }
    start = end + 1;
  }
  if (lines.empty()) return make_error("bad_csv", name, "The CSV file is empty.");
  RawTable table;
  table.name = name;
  table.num_rows = lines.size() - 1;
  for (size_t c = 0; c < lines[0].size(); ++c) {
    RawColumn column;
    column.name = lines[0][c];
    for (size_t r = 1; r < lines.size(); ++r) {
      if (lines[r].size() != lines[0].size())
        return make_error("bad_csv", name, "Row " + std::to_string(r + 1) + " has the wrong field count.");
      const std::string& cell = lines[r][c];
      char* end = nullptr;
      const double value = std::strtod(cell.c_str(), &end);
      if (!cell.empty() && end == cell.c_str() + cell.size()) {
        column.values.push_back(value);
      } else if (column.values.empty() && (r == 1 || (column.is_text && cell == column.text))) {
        column.is_text = true;
        column.text = cell;
      } else {
        return make_error("bad_csv", name, "Column " + column.name + " mixes text and numbers.");
      }
    }
    table.columns.push_back(std::move(column));
  }
  return table;
}

}  // namespace stepcalc
