// SPDX-License-Identifier: Apache-2.0
// Every lookup rule of the reference: brackets, interpolation, clamps, the
// zero-MFU fallbacks, missing corners, tie rules and the GEMM pair choice.
#include <cmath>
#include <limits>

#include "doctest.h"
#include "kernels/reference/mfu_lookup.h"
#include "test_support.h"

using namespace stepcalc;
using stepcalc::test::tables_from_csv;

TEST_CASE("bracket: ends, exact hits and interior points") {
  const double axis[] = {8, 16, 64};
  Bracket b = bracket(axis, 3, 1);
  CHECK((b.i0 == 0 && b.i1 == 0 && b.clamped == -1));
  b = bracket(axis, 3, 8);
  CHECK((b.i0 == 0 && b.i1 == 0 && b.clamped == 0));
  b = bracket(axis, 3, 64);
  CHECK((b.i0 == 2 && b.i1 == 2 && b.clamped == 0));
  b = bracket(axis, 3, 1000);
  CHECK((b.i0 == 2 && b.i1 == 2 && b.clamped == 1));
  b = bracket(axis, 3, 16);
  CHECK((b.i0 == 1 && b.i1 == 1 && b.degenerate()));
  b = bracket(axis, 3, 40);
  CHECK((b.i0 == 1 && b.i1 == 2));
  CHECK(b.t == doctest::Approx(0.5));
  const double one[] = {5};
  b = bracket(one, 1, 7);
  CHECK((b.i0 == 0 && b.i1 == 0));
}

TEST_CASE("lerp is a + (b - a) * t") {
  CHECK(lerp(1, 3, 0.25) == 1.5);
  CHECK(lerp(2, 2, 0.7) == 2);
}

namespace {
const char* kPrefill =
    "dtype,seq_len,latency_us,mfu\n"
    "bf16,1024,10,0.2\n"
    "bf16,4096,20,0.6\n"
    "bf16,8192,30,0.0\n"
    "bf16,16384,40,0.0\n";

MfuTables prefill_tables(const char* csv = kPrefill) {
  return tables_from_csv({{"gemm/t/data", "m,k,n,latency_us,mfu\n8,1,1,1,0.5\n"}, {"mha/prefill/t/4-4-8", csv}});
}
}  // namespace

TEST_CASE("prefill MFU: interpolation, clamp below the table, exact rows") {
  const MfuTables t = prefill_tables();
  const PrefillTable& p = t.prefill[0];
  CHECK(prefill_mfu(p, 512).mfu == 0.2);  // bucket 512 reads the 1024 row
  CHECK(prefill_mfu(p, 512).provenance.clamped_low);
  CHECK(prefill_mfu(p, 1024).mfu == 0.2);
  CHECK(prefill_mfu(p, 1024).provenance.exact);
  CHECK(prefill_mfu(p, 2048).mfu == 0.2 + (0.6 - 0.2) * ((2048.0 - 1024) / (4096 - 1024)));
  CHECK(std::string(prefill_mfu(p, 2048).provenance.how()) == "interpolated");
}

TEST_CASE("prefill MFU below 1e-4 takes the nearest non-zero row by |seq_len - seq|") {
  const MfuTables t = prefill_tables();
  const PrefillLookup l = prefill_mfu(t.prefill[0], 65536);  // clamps to 16384: MFU 0
  CHECK(l.mfu == 0.6);
  CHECK(l.provenance.fallback);
  CHECK(l.provenance.row == 1);
}

TEST_CASE("prefill MFU: ties go to the first row in file order; no non-zero row gives 1e-4") {
  const MfuTables tie =
      prefill_tables("dtype,seq_len,latency_us,mfu\nbf16,1000,1,0.3\nbf16,2000,1,0.0\nbf16,3000,1,0.5\n");
  CHECK(prefill_mfu(tie.prefill[0], 2000).mfu == 0.3);
  const MfuTables zero = prefill_tables("dtype,seq_len,latency_us,mfu\nbf16,1000,1,0.0\nbf16,2000,1,0.0\n");
  const PrefillLookup l = prefill_mfu(zero.prefill[0], 1500);
  CHECK(l.mfu == kMinMfu);
  CHECK(l.provenance.floor);
}

namespace {
// A 2x3 decode grid with the (16, 4096) corner missing.
const char* kDecode =
    "dtype,kv_dtype,batch_size,kv_len,latency_us,mfu\n"
    "bf16,bf16,1,1024,5,0.0\n"
    "bf16,bf16,1,2048,5,0.001\n"
    "bf16,bf16,1,4096,5,0.01\n"
    "bf16,bf16,16,1024,5,0.1\n"
    "bf16,bf16,16,2048,5,0.2\n";

DecodeTable decode_table(const char* csv = kDecode) {
  MfuTables t = tables_from_csv({{"gemm/t/data", "m,k,n,latency_us,mfu\n8,1,1,1,0.5\n"},
                                 {"mha/prefill/t/4-4-8", kPrefill},
                                 {"mha/decode/t/4-4-8-tp1", csv}});
  return t.decode.at(0);
}
}  // namespace

TEST_CASE("decode MFU: the four bracket cases") {
  const DecodeTable d = decode_table();
  CHECK(decode_mfu(d, 16, 2048).mfu == 0.2);                              // both degenerate
  CHECK(decode_mfu(d, 16, 1536).mfu == lerp(0.1, 0.2, 0.5));              // bs degenerate
  CHECK(decode_mfu(d, 8.5, 1024).mfu == lerp(0.0, 0.1, (8.5 - 1) / 15));  // kv degenerate
  const double tbs = (4.0 - 1) / 15, tkv = 0.5;
  CHECK(decode_mfu(d, 4, 1536).mfu == lerp(lerp(0.0, 0.1, tbs), lerp(0.001, 0.2, tbs), tkv));
}

TEST_CASE("decode MFU: a missing corner reads as 0") {
  const DecodeTable d = decode_table();
  const DecodeLookup l = decode_mfu(d, 16, 3072);  // between (16,2048)=0.2 and missing (16,4096)
  CHECK(l.mfu == lerp(0.2, 0.0, 0.5));
  CHECK(l.provenance.missing_corner);
}

TEST_CASE("decode MFU below 1e-4: nearest non-zero row to the REQUESTED, unclamped point") {
  const DecodeTable d = decode_table();
  // (1, 1024) is 0.0; nearest non-zero by raw distance from (1, 1000) is (1, 2048)? No:
  // (16, 1024) is at distance sqrt(15^2 + 24^2) ~ 28, (1, 2048) at 1048.
  DecodeLookup l = decode_mfu(d, 1, 1000);
  CHECK(l.mfu == 0.1);
  CHECK(l.provenance.fallback);
  CHECK(l.provenance.row == 3);
  // Far below the table: kv 0 requested, the distance is measured from (1, 0).
  l = decode_mfu(d, 1, 0);
  CHECK(l.mfu == 0.1);
}

TEST_CASE("decode MFU: fallback ties go to the first row in file order") {
  const DecodeTable d = decode_table(
      "dtype,kv_dtype,batch_size,kv_len,latency_us,mfu\n"
      "bf16,bf16,1,2000,5,0.3\n"
      "bf16,bf16,1,3000,5,0.0\n"
      "bf16,bf16,1,4000,5,0.4\n");
  CHECK(decode_mfu(d, 1, 3000).mfu == 0.3);
}

namespace {
/// The reference's fallback scan over every file row, the oracle for nearest_decode_row.
int scan_nearest_row(const DecodeTable& t, double bs, double kv) {
  int row = -1;
  double nearest = std::numeric_limits<double>::infinity();
  for (size_t r = 0; r < t.file_mfu.size(); ++r) {
    if (t.file_mfu[r] < kMinMfu) continue;
    const double d = std::sqrt((t.file_bs[r] - bs) * (t.file_bs[r] - bs) + (t.file_kv[r] - kv) * (t.file_kv[r] - kv));
    if (d < nearest) nearest = d, row = static_cast<int>(r);
  }
  return row;
}
}  // namespace

TEST_CASE("decode fallback: the grid walk finds the reference's row in every H100 table") {
  const double batches[] = {1, 2, 3, 5, 16, 31, 33, 100, 257, 511, 512, 513, 700, 4096, 65536};
  int checked = 0;
  for (const DecodeTable& t : embedded_h100_tables().decode) {
    for (double bs : batches) {
      for (double kv = 0; kv < 3e5; kv = kv * 1.37 + 17) {
        CHECK_MESSAGE(nearest_decode_row(t, bs, kv) == scan_nearest_row(t, bs, kv), t.key << " " << bs << " " << kv);
        ++checked;
      }
      for (double kv : {1e6, 1e9, 1e9 + 1, 123456789.0})  // far: rounding makes distances tie
        CHECK_MESSAGE(nearest_decode_row(t, bs, kv) == scan_nearest_row(t, bs, kv), t.key << " " << bs << " " << kv);
    }
  }
  CHECK(checked > 5000);
}

TEST_CASE("decode fallback: ties and gaps in a synthetic grid") {
  // Unmeasured cells, zero cells and two rows at the same distance from (2, 3000).
  const DecodeTable d = decode_table(
      "dtype,kv_dtype,batch_size,kv_len,latency_us,mfu\n"
      "bf16,bf16,3,3000,5,0.5\n"
      "bf16,bf16,1,3000,5,0.3\n"
      "bf16,bf16,1,2000,5,0.0\n"
      "bf16,bf16,2,4000,5,0.00001\n"
      "bf16,bf16,8,1000,5,0.2\n");
  CHECK(nearest_decode_row(d, 2, 3000) == 0);  // rows 0 and 1 both at distance 1: the first
  CHECK(scan_nearest_row(d, 2, 3000) == 0);
  for (double bs : {0.0, 1.0, 2.0, 5.0, 8.0, 100.0})
    for (double kv : {0.0, 999.0, 2500.0, 3000.0, 3500.0, 1e7})
      CHECK(nearest_decode_row(d, bs, kv) == scan_nearest_row(d, bs, kv));
}

namespace {
const char* kGemm =
    "m,k,n,latency_us,mfu\n"
    "8,2048,6144,1,0.01\n"
    "64,2048,6144,1,0.09\n"
    "8,4096,11008,1,0.02\n"
    "64,4096,11008,1,0.2\n"
    "8,8192,11008,1,0.03\n"
    "64,8192,11008,1,0.3\n";
GemmTable gemm_table() { return tables_from_csv({{"gemm/t/data", kGemm}, {"mha/prefill/t/4-4-8", kPrefill}}).gemm; }
}  // namespace

TEST_CASE("GEMM MFU: the covering pair nearest to (k, n)") {
  const GemmTable g = gemm_table();
  GemmLookup l = gemm_mfu(g, 64, 2048, 6144);
  CHECK((g.pairs[l.pair].k == 2048 && g.pairs[l.pair].n == 6144 && l.pair_exact));
  CHECK(l.mfu == 0.09);
  l = gemm_mfu(g, 64, 3000, 6144);  // covered by (4096,11008) and (8192,11008): nearer first
  CHECK((g.pairs[l.pair].k == 4096 && !l.pair_exact && !l.pair_largest));
  CHECK(l.mfu == 0.2);
}

TEST_CASE("GEMM MFU: no covering pair uses the largest K^2 + N^2") {
  const GemmTable g = gemm_table();
  const GemmLookup l = gemm_mfu(g, 64, 4096, 14336);
  CHECK((g.pairs[l.pair].k == 8192 && g.pairs[l.pair].n == 11008 && l.pair_largest));
  CHECK(l.mfu == 0.3);
}

TEST_CASE("GEMM MFU: M below the table clamps to the smallest M; interior M interpolates") {
  const GemmTable g = gemm_table();
  GemmLookup l = gemm_mfu(g, 1, 2048, 6144);
  CHECK(l.mfu == 0.01);
  CHECK(l.provenance.clamped_low);
  l = gemm_mfu(g, 36, 2048, 6144);
  CHECK(l.mfu == lerp(0.01, 0.09, 0.5));
  l = gemm_mfu(g, 1e6, 2048, 6144);
  CHECK((l.mfu == 0.09 && l.provenance.clamped_high));
}

TEST_CASE("GEMM MFU below 1e-4: nearest non-zero row over (M, K, N)") {
  const GemmTable g = tables_from_csv({{"gemm/t/data",
                                        "m,k,n,latency_us,mfu\n8,2048,6144,1,0.0\n64,2048,6144,1,0.0\n"
                                        "8,4096,6144,1,0.05\n"},
                                       {"mha/prefill/t/4-4-8", kPrefill}})
                          .gemm;
  const GemmLookup l = gemm_mfu(g, 16, 2048, 6144);
  CHECK(l.mfu == 0.05);
  CHECK(l.provenance.fallback);
}

TEST_CASE("attention config: exact, nearest, and ties to the byte-wise first key") {
  const MfuTables& t = embedded_h100_tables();
  CHECK(nearest_attention_config(t, 32, 8, 128)->key == "32-8-128");
  CHECK(nearest_attention_config(t, 64, 8, 128)->key == "64-8-128");
  CHECK(nearest_attention_config(t, 40, 8, 128)->key == "32-8-128");  // 8 from 32-8, 16 from 56-8
  // (32, 20, 128) is 12 from both 32-32-128 and 32-8-128: "32-32-128" sorts first.
  CHECK(nearest_attention_config(t, 32, 20, 128)->key == "32-32-128");
}

TEST_CASE("decode table: exact TP, else nearest with ties to the smaller TP") {
  const MfuTables& t = embedded_h100_tables();
  CHECK(decode_table_for(t, "32-8-128", 2)->tp == 2);
  CHECK(decode_table_for(t, "32-8-128", 3)->tp == 2);
  CHECK(decode_table_for(t, "32-8-128", 8)->tp == 4);
  CHECK(decode_table_for(t, "32-8-128", 16)->tp == 4);
  CHECK(decode_table_for(t, "1-1-1", 1) == nullptr);
}
