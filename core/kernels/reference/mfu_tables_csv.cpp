// SPDX-License-Identifier: Apache-2.0
// Reading bench_data CSV text into raw tables (tests prove the packed blob equal to it).
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/reference/mfu_tables.h"

namespace stepcalc {

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
