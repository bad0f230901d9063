// SPDX-License-Identifier: Apache-2.0
// The packed tables are a lossless copy of bench_data/: every CSV value decodes to
// exactly the double the CSV text denotes.
#include <cstring>
#include <string>
#include <vector>

#include "doctest.h"
#include "kernels/embedded_data.h"
#include "kernels/reference/mfu_tables.h"
#include "test_support.h"

using namespace stepcalc;

namespace {

const std::vector<std::string> kCsvFiles = [] {
  std::vector<std::string> names = {"gemm/h100/data"};
  for (const char* key : {"28-4-128", "32-32-128", "32-8-128", "40-40-128", "56-8-128", "64-8-128"}) {
    names.push_back(std::string("mha/prefill/h100/") + key);
    for (const char* tp : {"-tp1", "-tp2", "-tp4"}) names.push_back(std::string("mha/decode/h100/") + key + tp);
  }
  return names;
}();

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("the packed blob decodes to exactly the CSV values of bench_data") {
  auto unpacked = unpack_tables(embedded_tables_blob(), embedded_tables_blob_size());
  REQUIRE(unpacked.ok());
  const std::vector<RawTable>& tables = unpacked.value();
  CHECK(tables.size() == kCsvFiles.size());
  size_t values = 0;
  for (const std::string& name : kCsvFiles) {
    CAPTURE(name);
    auto csv = parse_csv_table(name, test::read_file("bench_data/" + name + ".csv"));
    REQUIRE(csv.ok());
    const RawTable* packed = nullptr;
    for (const RawTable& t : tables)
      if (t.name == name) packed = &t;
    REQUIRE(packed != nullptr);
    REQUIRE(packed->num_rows == csv->num_rows);
    REQUIRE(packed->columns.size() == csv->columns.size());
    for (size_t c = 0; c < csv->columns.size(); ++c) {
      const RawColumn& want = csv->columns[c];
      const RawColumn& got = packed->columns[c];
      CHECK(got.name == want.name);
      CHECK(got.is_text == want.is_text);
      CHECK(got.text == want.text);
      REQUIRE(got.values.size() == want.values.size());
      for (size_t r = 0; r < want.values.size(); ++r, ++values) {
        if (!same_bits(got.values[r], want.values[r])) FAIL_CHECK(name << " row " << r << " column " << want.name);
      }
    }
  }
  CHECK(values > 3000);  // 897 rows x 4-5 numeric columns
}

TEST_CASE("the embedded H100 tables have the documented shape") {
  const MfuTables& t = embedded_h100_tables();
  CHECK(t.gemm.pairs.size() == 8);
  CHECK(t.prefill.size() == 6);
  CHECK(t.decode.size() == 18);
  CHECK(t.prefill.front().key == "28-4-128");  // byte-wise order
  const PrefillTable* p = t.find_prefill("32-8-128");
  REQUIRE(p != nullptr);
  CHECK(p->seq_axis.front() == 1024);
  CHECK(p->seq_axis.back() == 32768);
  CHECK(embedded::kTablesBlobSize < embedded::kTablesCsvBytes / 2);
}

TEST_CASE("a truncated or corrupted blob is an error, never a crash") {
  const uint8_t* blob = embedded_tables_blob();
  const size_t size = embedded_tables_blob_size();
  for (size_t cut = 0; cut < size; cut += (cut < 64 ? 1 : 97)) {
    auto t = unpack_tables(blob, cut);
    CHECK_FALSE(t.ok());
  }
  std::vector<uint8_t> copy(blob, blob + size);
  for (size_t i = 4; i < copy.size(); i += 131) {
    std::vector<uint8_t> bad = copy;
    bad[i] ^= 0xff;
    auto t = unpack_tables(bad.data(), bad.size());
    if (t.ok()) (void)MfuTables::build(t.value(), "h100");  // may decode to other numbers; must not crash
  }
  const uint8_t junk[] = {'S', 'C', 'T', '1', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  CHECK_FALSE(unpack_tables(junk, sizeof junk).ok());
}

TEST_CASE("malformed CSV text is refused") {
  CHECK_FALSE(parse_csv_table("x", "").ok());
  CHECK_FALSE(parse_csv_table("x", "a,b\n1\n").ok());
  CHECK_FALSE(parse_csv_table("x", "a\n1\nfoo\n").ok());
  auto t = parse_csv_table("x", "dtype,v\nbf16,1.5\nbf16,2\n");
  REQUIRE(t.ok());
  CHECK(t->columns[0].is_text);
  CHECK(t->columns[1].values == std::vector<double>{1.5, 2});
}
