// SPDX-License-Identifier: Apache-2.0
// Every lookup rule of the measured kernel database (docs/KERNELS.md), at the table's
// own points (its latency comes back exactly) and between them, on the real packs.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "doctest.h"
#include "kernel_test_support.h"

using namespace stepcalc;

namespace {

double num(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

int cell_count(const KernelTime& t) {
  int n = 0;
  for (int32_t c : t.cells) n += c >= 0;
  return n;
}

bool uses_row(const KernelTime& t, size_t row) {
  for (int32_t c : t.cells) {
    if (c == static_cast<int32_t>(row)) return true;
  }
  return false;
}

// Per CSV row, the least latency at its value of the work axis (column `x`, the last key) or
// any larger value with the same earlier keys: the lower monotone envelope the lookups read.
std::vector<double> envelope_of(const std::vector<std::vector<std::string>>& rows, size_t x, size_t latency) {
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t r = 0; r < rows.size(); ++r) {
    std::string key;
    for (size_t c = 0; c < x; ++c) key += rows[r][c] + ",";
    groups[key].push_back(r);
  }
  std::vector<double> env(rows.size());
  for (auto& [key, members] : groups) {
    std::sort(members.begin(), members.end(), [&](size_t a, size_t b) { return num(rows[a][x]) < num(rows[b][x]); });
    double least = INFINITY;
    for (size_t i = members.size(); i-- > 0;) least = env[members[i]] = std::min(least, num(rows[members[i]][latency]));
  }
  return env;
}

// A lookup at a measured cell: the cell itself, or (an upward outlier) the envelope's value,
// naming both cells. Returns whether it was an outlier.
bool at_cell(const KernelTime& t, double latency, double envelope) {
  if (envelope < latency) {
    REQUIRE(t.how == LookupHow::kEnvelope);
    REQUIRE(t.us == envelope);
    CHECK(cell_count(t) == 2);
    return true;
  }
  REQUIRE(t.how == LookupHow::kExact);
  REQUIRE(t.us == latency);
  return false;
}

// As at_cell for a table of batch x work: a larger batch's row may bound the cell further
// (at most the envelope along the work axis, `envelope`).
bool at_grid_cell(const KernelTime& t, double latency, double envelope) {
  if (t.how == LookupHow::kExact) {
    REQUIRE(t.us == latency);
    CHECK(envelope == latency);
    return false;
  }
  REQUIRE(t.how == LookupHow::kEnvelope);
  CHECK(t.us <= envelope);
  CHECK(t.us < latency);
  return true;
}

}  // namespace

TEST_CASE("gemm: every measured cell comes back exactly, outliers give the envelope") {
  auto db = test::load_kernels("H100", "vllm-0.14.0", {"gemm-bf16", "gemm-fp8", "gemm-fp8_block"});
  const auto rows = test::csv_rows("bench_data/aic/h100/vllm-0.14.0/gemm.csv");
  const std::vector<double> env = envelope_of(rows, 3, 4);  // along m only
  int exact = 0, envelope = 0, outliers = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto& c = rows[r];
    const KernelDtype dtype = test::dtype_named(c[0]);
    const KernelTime t = db->gemm(dtype, num(c[3]), num(c[1]), num(c[2]));
    if (t.outlier_us > 0) {  // a lower-precision cell slower than bf16: the bf16 time, marked
      REQUIRE(dtype != KernelDtype::kBf16);
      CHECK(t.dtype == KernelDtype::kBf16);
      CHECK(t.outlier_dtype == dtype);
      CHECK(t.us < t.outlier_us);
      CHECK(t.outlier_us <= num(c[4]));  // the fp8 cell, or its envelope
      ++outliers;
      continue;
    }
    REQUIRE(uses_row(t, r));
    CHECK(t.table == KernelTable::kGemm);
    if (t.how == LookupHow::kExact) {
      REQUIRE(t.us == num(c[4]));
      CHECK(env[r] == num(c[4]));
      CHECK(cell_count(t) == 1);
      ++exact;
    } else {
      // An upward outlier: a larger m of the same (n, k) measured less (that cell is named), or
      // the next larger k of the same n is faster at this m.
      REQUIRE(t.how == LookupHow::kEnvelope);
      CHECK(t.us < num(c[4]));
      CHECK(t.us <= env[r]);
      if (t.us == env[r] && env[r] < num(c[4])) CHECK(cell_count(t) == 2);
      ++envelope;
    }
  }
  MESSAGE(exact << " exact, " << envelope << " envelope, " << outliers << " fp8/fp8_block outliers");
  CHECK(outliers > 0);  // 0.14.0's fp8 rows from m ~ 160 up (../shared/aic/README.md)
  CHECK(envelope > 0);
  // Mostly noise in the flat small-m region, along m and along k.
  CHECK(envelope < (exact + envelope + outliers) / 6);
  // The outlier the source README names: n=12288, k=8192 at m=2048 measured 2150 us, more
  // than m=4096 (956 us) and than k=10240 at m=2048 (577 us); the envelope takes 577.
  const KernelTime outlier = db->gemm(KernelDtype::kBf16, 2048, 12288, 8192);
  CHECK(outlier.how == LookupHow::kEnvelope);
  CHECK(outlier.us == 577);
}

TEST_CASE("gemm: a cell slower than the next larger k's at its m is that row's (time never falls as k grows)") {
  // H200 vllm-0.24.0 fp8_block, n = 1024, m = 3072: 1,090 us at k = 2,560 and 81.6 us at k = 3,072.
  auto db = test::load_kernels("H200", "vllm-0.24.0", {"gemm-fp8_block"});
  const KernelTime t = db->gemm(KernelDtype::kFp8Block, 3072, 1024, 2560);
  CHECK(t.how == LookupHow::kEnvelope);
  CHECK(t.us == db->gemm(KernelDtype::kFp8Block, 3072, 1024, 3072).us);
  CHECK(t.us <= 81.6);
  // Along k at any measured m of this n the time never falls.
  for (double m : {1.0, 64.0, 3072.0, 4096.0}) {
    double last = 0;
    for (double k : {32.0, 64.0, 128.0, 256.0, 512.0, 768.0, 1024.0, 1536.0, 2048.0, 2560.0, 3072.0, 3584.0, 4096.0}) {
      const double us = db->gemm(KernelDtype::kFp8Block, m, 1024, k).us;
      CHECK(us >= last);
      last = us;
    }
  }
}

TEST_CASE("gemm: piecewise-linear in m, clamped below, proportional beyond") {
  auto db = test::load_kernels("H100", "vllm-0.14.0", {"gemm-bf16"});
  const double n = 4096, k = 4096;
  const KernelTime a = db->gemm(KernelDtype::kBf16, 1024, n, k);
  const KernelTime b = db->gemm(KernelDtype::kBf16, 2048, n, k);
  REQUIRE(a.how == LookupHow::kExact);
  REQUIRE(b.how == LookupHow::kExact);
  const KernelTime mid = db->gemm(KernelDtype::kBf16, 1280, n, k);  // not measured in 0.14.0
  CHECK(mid.how == LookupHow::kInterpolated);
  CHECK(cell_count(mid) == 2);
  const KernelTime lo = db->gemm(KernelDtype::kBf16, 1024 + 0, n, k);
  CHECK(lo.us == a.us);
  const KernelTime below = db->gemm(KernelDtype::kBf16, 0.5, n, k);
  CHECK(below.how == LookupHow::kClamped);
  CHECK(below.us == db->gemm(KernelDtype::kBf16, 1, n, k).us);
  const KernelTime top = db->gemm(KernelDtype::kBf16, 8192, n, k);
  REQUIRE(top.how == LookupHow::kExact);
  const KernelTime beyond = db->gemm(KernelDtype::kBf16, 16384, n, k);
  CHECK(beyond.how == LookupHow::kExtrapolated);
  CHECK(beyond.us == doctest::Approx(2 * top.us).epsilon(1e-12));
  // Linear between its two cells.
  const auto rows = test::csv_rows("bench_data/aic/h100/vllm-0.14.0/gemm.csv");
  double t0 = 0, t1 = 0, m0 = 0, m1 = 0;
  for (int32_t c : mid.cells) {
    if (c < 0) continue;
    (m0 == 0 ? m0 : m1) = num(rows[c][3]);
    (t0 == 0 ? t0 : t1) = num(rows[c][4]);
  }
  CHECK(mid.us == doctest::Approx(t0 + (t1 - t0) * (1280 - m0) / (m1 - m0)).epsilon(1e-12));
}

TEST_CASE("gemm: between measured n and k the efficiency is interpolated in log n, log k") {
  auto db = test::load_kernels("H100", "vllm-0.14.0", {"gemm-bf16"});
  const double m = 512;
  const KernelTime n0 = db->gemm(KernelDtype::kBf16, m, 4096, 4096);
  const KernelTime n1 = db->gemm(KernelDtype::kBf16, m, 5120, 4096);  // the next measured n
  REQUIRE(n0.how == LookupHow::kExact);
  REQUIRE(n1.how == LookupHow::kExact);
  const double n = std::sqrt(4096.0 * 5120.0);  // halfway in log n
  const KernelTime between = db->gemm(KernelDtype::kBf16, m, n, 4096);
  CHECK(between.how == LookupHow::kInterpolated);
  const double e = (4096 / n0.us + 5120 / n1.us) / 2;
  CHECK(between.us == doctest::Approx(n / e).epsilon(1e-12));
  // k the same way (3584 and 4096 are neighbours).
  const KernelTime k0 = db->gemm(KernelDtype::kBf16, m, 4096, 3584);
  const KernelTime kk = db->gemm(KernelDtype::kBf16, m, 4096, std::sqrt(3584.0 * 4096.0));
  CHECK(kk.how == LookupHow::kInterpolated);
  CHECK(kk.us == doctest::Approx(std::sqrt(3584.0 * 4096.0) / ((3584 / k0.us + 4096 / n0.us) / 2)).epsilon(1e-12));
  // Four corners: between n and between k at once names up to 4 cells.
  const KernelTime both = db->gemm(KernelDtype::kBf16, m, 5000, 3000);
  CHECK(both.how == LookupHow::kInterpolated);
  CHECK(cell_count(both) == 4);
  // Beyond the largest n the efficiency of the edge is kept: time grows with n.
  const KernelTime edge = db->gemm(KernelDtype::kBf16, m, 65536, 4096);
  const KernelTime past = db->gemm(KernelDtype::kBf16, m, 131072, 4096);
  CHECK(past.how == LookupHow::kExtrapolated);
  CHECK(past.us == doctest::Approx(2 * edge.us).epsilon(1e-12));
  // Below the smallest n the time of the edge is kept.
  CHECK(db->gemm(KernelDtype::kBf16, m, 16, 4096).how == LookupHow::kClamped);
}

TEST_CASE("attention: measured cells exact; bilinear in batch and tokens; rules beyond") {
  auto db = test::load_kernels("H100", "vllm-0.14.0", {"attention-bf16"});
  const auto rows = test::csv_rows("bench_data/aic/h100/vllm-0.14.0/decode_attention.csv");
  const std::vector<double> env = envelope_of(rows, 5, 6);
  int outliers = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto& c = rows[r];
    if (c[0] != "bf16") continue;
    const KernelTime t = db->decode_attention(num(c[4]), num(c[5]), std::atoi(c[3].c_str()), std::atoi(c[2].c_str()),
                                              std::atoi(c[1].c_str()), KernelDtype::kBf16);
    outliers += at_grid_cell(t, num(c[6]), env[r]);
    REQUIRE(uses_row(t, r));
  }
  CHECK(outliers > 0);
  // Llama-3.1-8B at TP 1: 32 heads, 8 KV heads, head size 128.
  auto at = [&](double b, double kv) { return db->decode_attention(b, kv, 32, 8, 128, KernelDtype::kBf16); };
  const double b0 = 32, b1 = 64, k0 = 1023, k1 = 2047;
  REQUIRE(at(b0, k0).how == LookupHow::kExact);
  REQUIRE(at(b1, k1).how == LookupHow::kExact);
  const KernelTime mid = at(48, 1535);
  CHECK(mid.how == LookupHow::kInterpolated);
  CHECK(cell_count(mid) == 4);
  const double expect = ((at(b0, k0).us + at(b0, k1).us) / 2 + (at(b1, k0).us + at(b1, k1).us) / 2) / 2;
  CHECK(mid.us == doctest::Approx(expect).epsilon(1e-12));
  // Beyond the longest measured context: the line through the last two points.
  const KernelTime far = at(1, 49151);  // 16383 and 32767 are the last two measured
  CHECK(far.how == LookupHow::kExtrapolated);
  CHECK(far.us == doctest::Approx(2 * at(1, 32767).us - at(1, 16383).us).epsilon(1e-12));
  // A head configuration not measured: the nearest one, scaled by KV heads.
  const KernelTime mha = db->decode_attention(8, 1023, 32, 32, 128, KernelDtype::kBf16);
  CHECK(mha.how == LookupHow::kApproximated);
  CHECK(mha.us > at(8, 1023).us);
  // Prefill: exact at a cell, quadratic beyond the longest sequence.
  const auto pre = db->prefill_attention(1, 16384, 32, 8, 128, KernelDtype::kBf16);
  REQUIRE(pre.how == LookupHow::kExact);
  const auto pre2 = db->prefill_attention(1, 32768, 32, 8, 128, KernelDtype::kBf16);
  CHECK(pre2.how == LookupHow::kExtrapolated);
  CHECK(pre2.us == doctest::Approx(4 * pre.us).epsilon(1e-12));
  // A head size not measured (0.14.0 has 128 only): scaled, approximated.
  const auto hd = db->prefill_attention(1, 4096, 32, 8, 64, KernelDtype::kBf16);
  CHECK(hd.how == LookupHow::kApproximated);
  CHECK(hd.us == doctest::Approx(db->prefill_attention(1, 4096, 32, 8, 128, KernelDtype::kBf16).us / 2));
}

TEST_CASE("allreduce: exact at measured sizes, linear between, 0 at TP 1, nearest TP scaled") {
  auto db = test::load_kernels("H100", "vllm-0.14.0", {"allreduce"});
  const auto rows = test::csv_rows("bench_data/aic/h100/vllm-0.14.0/allreduce.csv");
  const std::vector<double> env = envelope_of(rows, 1, 2);
  for (size_t r = 0; r < rows.size(); ++r) {
    const KernelTime t = db->allreduce(std::atoi(rows[r][0].c_str()), num(rows[r][1]));
    at_cell(t, num(rows[r][2]), env[r]);
  }
  const double a = db->allreduce(4, 1 << 20).us, b = db->allreduce(4, 1 << 21).us;
  const KernelTime mid = db->allreduce(4, 1.5 * (1 << 20));
  CHECK(mid.how == LookupHow::kInterpolated);
  CHECK(mid.us == doctest::Approx((a + b) / 2).epsilon(1e-12));
  CHECK(db->allreduce(1, 1 << 20).us == 0);
  const KernelTime t16 = db->allreduce(16, 1 << 20);
  CHECK(t16.how == LookupHow::kApproximated);
  CHECK(t16.us == doctest::Approx(db->allreduce(8, 1 << 20).us * (15.0 / 16) / (7.0 / 8)));
  CHECK(db->allreduce(2, 1).how == LookupHow::kClamped);
}

TEST_CASE("moe: exact at measured cells, linear in tokens, nearest shape scaled") {
  auto db = test::load_kernels("H100", "vllm-0.14.0", {"moe", "moe-fp8_block", "moe-int4"});
  const auto rows = test::csv_rows("bench_data/aic/h100/vllm-0.14.0/moe.csv");
  const std::vector<double> env = envelope_of(rows, 7, 8);
  int outliers = 0;
  for (size_t r = 0; r < rows.size(); r += 7) {
    const auto& c = rows[r];
    const KernelTime t =
        db->moe(test::dtype_named(c[0]), num(c[7]), std::atoi(c[1].c_str()), std::atoi(c[2].c_str()),
                std::atoi(c[3].c_str()), std::atoi(c[4].c_str()), std::atoi(c[5].c_str()), std::atoi(c[6].c_str()));
    if (t.outlier_us > 0) {  // a lower-precision cell slower than the bf16 one: the bf16 time
      REQUIRE(c[0] != "bf16");
      CHECK(t.us < t.outlier_us);
      CHECK(t.outlier_us == env[r]);  // the cell, or its envelope
      continue;
    }
    outliers += at_cell(t, num(c[8]), env[r]);
  }
  CHECK(outliers > 0);
  // Mixtral-8x7B: hidden 4096, intermediate 14336, 8 experts, top-2.
  auto at = [&](double tokens, int tp) { return db->moe(KernelDtype::kBf16, tokens, 4096, 14336, 8, 2, tp, 1); };
  REQUIRE(at(64, 1).how == LookupHow::kExact);
  REQUIRE(at(128, 1).how == LookupHow::kExact);
  CHECK(at(96, 1).how != LookupHow::kApproximated);
  CHECK(at(100, 1).us > at(64, 1).us);
  const KernelTime other = db->moe(KernelDtype::kBf16, 64, 4096, 7168, 8, 2, 1, 1);
  CHECK(other.how == LookupHow::kApproximated);
  CHECK(other.us == doctest::Approx(at(64, 1).us / 2));
}

TEST_CASE("attention: time never falls as the batch or the context grows, at every measured cell") {
  // H100 vllm-0.24.0 decode attention, head size 512, 2 KV heads, 16 heads: 1,700 us at batch
  // 256 and 4,830 us at batch 512 for 63 cached tokens, 327 us at batch 1,024.
  auto db = test::load_kernels("H100", "vllm-0.24.0", {"attention-bf16"});
  auto at = [&](double b, double kv) { return db->decode_attention(b, kv, 16, 2, 512, KernelDtype::kBf16); };
  CHECK(at(1024, 63).how == LookupHow::kExact);
  CHECK(at(1024, 63).us == 327);
  CHECK(at(512, 63).how == LookupHow::kEnvelope);
  CHECK(at(512, 63).us == 327);
  CHECK(at(256, 63).us == 327);
  CHECK(at(64, 63).us == 280);   // below the larger batches' time: as measured
  CHECK(at(768, 63).us == 327);  // between batches 512 and 1,024 the line, not a hump
  // Every measured cell: no larger batch of its shape is faster at its length, no longer
  // length faster at its batch.
  const auto rows = test::csv_rows("bench_data/aic/h100/vllm-0.24.0/decode_attention.csv");
  std::map<std::string, std::vector<std::array<double, 2>>> shapes;  // (batch, kv) of each shape
  for (const auto& c : rows)
    if (c[0] == "bf16") shapes[c[1] + "," + c[2] + "," + c[3]].push_back({num(c[4]), num(c[5])});
  int checked = 0;
  for (const auto& [key, cells] : shapes) {
    const int hd = std::atoi(key.c_str()), kvh = std::atoi(key.c_str() + key.find(',') + 1);
    const int heads = std::atoi(key.c_str() + key.rfind(',') + 1);
    auto us = [&](double b, double kv) { return db->decode_attention(b, kv, heads, kvh, hd, KernelDtype::kBf16).us; };
    std::map<double, std::vector<double>> by_batch;
    for (const auto& cell : cells) by_batch[cell[0]].push_back(cell[1]);
    for (auto it = by_batch.begin(); it != by_batch.end(); ++it) {
      std::vector<double>& kvs = it->second;
      std::sort(kvs.begin(), kvs.end());
      for (size_t i = 0; i + 1 < kvs.size(); ++i) CHECK(us(it->first, kvs[i]) <= us(it->first, kvs[i + 1]));
      const auto next = std::next(it);
      if (next == by_batch.end()) continue;
      for (double kv : kvs) {
        if (kv < next->second.front() || kv > next->second.back()) continue;  // that row does not reach it
        CHECK(us(it->first, kv) <= us(next->first, kv) * (1 + 1e-12));
        ++checked;
      }
    }
  }
  MESSAGE(checked << " cells checked against the next larger batch");
  CHECK(checked > 10000);
}

TEST_CASE("moe: a cell slower than a larger token count's is the envelope's (time never falls as work grows)") {
  // B200 vllm-0.24.0, gpt-oss-120b's MXFP4 experts (2880 x 2880, 128 experts, top-4) on one GPU:
  // measured 863 us at 512 tokens and 707 us at 768 (bench_data/aic/b200/vllm-0.24.0/moe.csv).
  auto db = test::load_kernels("B200", "vllm-0.24.0", {"moe-mxfp4"});
  auto at = [&](double tokens) { return db->moe(KernelDtype::kMxfp4, tokens, 2880, 2880, 128, 4, 1, 1); };
  const KernelTime t512 = at(512), t768 = at(768);
  CHECK(t768.how == LookupHow::kExact);
  CHECK(t768.us == 707);
  CHECK(t512.how == LookupHow::kEnvelope);
  CHECK(t512.us == 707);
  CHECK(cell_count(t512) == 2);
  // Between 384 tokens (693 us) and 512 the line reaches 707, not 863.
  CHECK(at(448).us == doctest::Approx((693 + 707) / 2.0).epsilon(1e-12));
  // Along the whole measured range the time never falls.
  double last = 0;
  for (double tokens = 1; tokens <= 16384; tokens *= 1.25) {
    const double us = at(tokens).us;
    CHECK(us >= last);
    last = us;
  }
}

TEST_CASE("mla: exact at measured cells, bilinear between") {
  auto db = test::load_kernels("H100", "vllm-0.24.0", {"mla"});
  const auto rows = test::csv_rows("bench_data/aic/h100/vllm-0.24.0/mla_decode.csv");
  const std::vector<double> env = envelope_of(rows, 3, 4);
  int fp8_outliers = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto& c = rows[r];
    const KernelTime t = db->mla_decode(num(c[2]), num(c[3]), std::atoi(c[1].c_str()),
                                        c[0] == "fp8" ? KernelDtype::kFp8 : KernelDtype::kBf16);
    if (t.outlier_us > 0) {  // the FP8-KV module slower than the BF16-KV one: the BF16 time, marked
      REQUIRE(c[0] == "fp8");
      CHECK(t.dtype == KernelDtype::kBf16);
      CHECK(t.outlier_dtype == KernelDtype::kFp8);
      CHECK(t.us < t.outlier_us);
      CHECK(t.outlier_us <= env[r]);
      ++fp8_outliers;
      continue;
    }
    at_grid_cell(t, num(c[4]), env[r]);
  }
  // H100 0.24.0 measures the FP8-KV module slower than the BF16-KV one at small batches (8
  // heads, batch 1, 2 cached tokens: 112 us against 89.3 us; their envelopes 110 and 88.0).
  CHECK(fp8_outliers > 0);
  const KernelTime small = db->mla_decode(1, 2, 8, KernelDtype::kFp8);
  CHECK(small.us == doctest::Approx(88.0));
  CHECK(small.outlier_us == doctest::Approx(110));
  const KernelTime p = db->mla_prefill(3, 1000, 128, KernelDtype::kBf16);
  CHECK(p.how == LookupHow::kInterpolated);
  CHECK(p.us > 0);
}

TEST_CASE("a table that is not loaded answers NaN and 'missing', never a silent zero") {
  auto db = test::load_kernels("H100", "vllm-0.14.0", {"allreduce"});
  const KernelTime g = db->gemm(KernelDtype::kBf16, 64, 4096, 4096);
  CHECK(g.how == LookupHow::kMissing);
  CHECK(std::isnan(g.us));
  CHECK(std::isnan(db->decode_attention(1, 100, 32, 8, 128, KernelDtype::kBf16).us));
  CHECK(std::isnan(db->moe(KernelDtype::kBf16, 1, 4096, 14336, 8, 2, 1, 1).us));
  CHECK(db->describe(g).find("not loaded") != std::string::npos);
  auto a100 = test::load_kernels("A100", "vllm-0.14.0");
  // A100's fused-MoE rows were measured with power-law routing only, the routing kept.
  CHECK(a100->has(KernelTable::kMoe, KernelDtype::kBf16));
  CHECK_FALSE(a100->has(KernelTable::kGemm, KernelDtype::kFp8));  // no FP8 tensor cores
}

TEST_CASE("precision: a lower precision is never priced slower than bf16 for the same work (table outliers)") {
  for (const char* version : {"vllm-0.14.0", "vllm-0.24.0"}) {
    CAPTURE(version);
    auto db = test::load_kernels("H100", version, {"gemm-bf16", "gemm-fp8", "attention-bf16", "attention-fp8", "moe"});
    int marked = 0;
    for (double m : {1.0, 8.0, 64.0, 160.0, 384.0, 1000.0, 4096.0, 16384.0})
      for (double nk : {1024.0, 4096.0, 8192.0, 28672.0}) {
        const KernelTime fp8 = db->gemm(KernelDtype::kFp8, m, nk, 8192);
        const KernelTime bf16 = db->gemm(KernelDtype::kBf16, m, nk, 8192);
        CHECK(fp8.us <= bf16.us);
        if (fp8.outlier_us > 0) {
          ++marked;
          CHECK(fp8.us == bf16.us);
          CHECK(fp8.outlier_us > bf16.us);
        }
      }
    for (double batch : {1.0, 16.0, 128.0})
      for (double len : {128.0, 2048.0, 16384.0}) {
        CHECK(db->decode_attention(batch, len, 16, 2, 128, KernelDtype::kFp8).us <=
              db->decode_attention(batch, len, 16, 2, 128, KernelDtype::kBf16).us);
        CHECK(db->prefill_attention(batch, len, 16, 2, 128, KernelDtype::kFp8).us <=
              db->prefill_attention(batch, len, 16, 2, 128, KernelDtype::kBf16).us);
      }
    for (double tokens : {1.0, 64.0, 4096.0})
      CHECK(db->moe(KernelDtype::kFp8, tokens, 4096, 14336, 8, 2, 1, 1).us <=
            db->moe(KernelDtype::kBf16, tokens, 4096, 14336, 8, 2, 1, 1).us);
    if (std::string(version) == "vllm-0.14.0") CHECK(marked > 0);
  }
}

TEST_CASE("the lookup memo answers as the tables do: repeated, colliding and evicted keys") {
  // `warm` answers many lookups (more keys than its memo holds, in three orders, FP8 beside
  // BF16 of the same shapes); each must equal, field for field, a database that never saw them.
  const auto warm = test::load_kernels("H100", "vllm-0.24.0");
  const auto same = [](const KernelTime& a, const KernelTime& b) {
    return std::memcmp(&a.us, &b.us, sizeof a.us) == 0 && a.table == b.table && a.how == b.how &&
           std::equal(std::begin(a.cells), std::end(a.cells), std::begin(b.cells)) && a.dtype == b.dtype &&
           std::memcmp(&a.outlier_us, &b.outlier_us, sizeof a.outlier_us) == 0 && a.outlier_dtype == b.outlier_dtype;
  };
  const auto ask = [](const KernelDb& db, int i) {
    const double m = 1 + (i * 37) % 3000;
    switch (i % 6) {
      case 0:
        return db.gemm(KernelDtype::kBf16, m, 8192, 8192);
      case 1:
        return db.gemm(KernelDtype::kFp8, m, 8192, 8192);
      case 2:
        return db.decode_attention(1 + i % 64, 100 + i, 8, 1, 128, KernelDtype::kBf16);
      case 3:
        return db.prefill_attention(1 + i % 4, 64 + i, 8, 1, 128, KernelDtype::kFp8);
      case 4:
        return db.allreduce(2 + 2 * (i % 2), 4096.0 * (1 + i % 500));
      default:
        return db.moe(KernelDtype::kBf16, m, 4096, 14336, 8, 2, 1, 1);
    }
  };
  const int n = 9000;
  std::vector<KernelTime> first;
  for (int i = 0; i < n; ++i) first.push_back(ask(*warm, i));
  for (int i = n - 1; i >= 0; --i) CHECK(same(ask(*warm, i), first[static_cast<size_t>(i)]));
  for (int i = 0; i < n; i += 2) CHECK(same(ask(*warm, i), first[static_cast<size_t>(i)]));
  const auto cold = test::load_kernels("H100", "vllm-0.24.0");
  for (int i = 0; i < n; i += 7) CHECK(same(ask(*cold, i), first[static_cast<size_t>(i)]));
}

TEST_CASE("fused MoE: the nearest measured shape, kept per table, answers as a fresh search") {
  // Each MoE lookup the memo misses searched every measured shape (six logarithms each); the
  // last shapes found are kept. Seven shapes (more than are kept), measured and approximated, in
  // its dtype and in BF16, asked in turns at token counts the memo has not seen, answer to the
  // bit as another database asked in the opposite order does.
  const auto warm = test::load_kernels("H100", "vllm-0.24.0");
  const auto cold = test::load_kernels("H100", "vllm-0.24.0");
  struct Shape {
    KernelDtype dtype;
    int hidden, inter, experts, topk, tp, ep;
  };
  const Shape shapes[] = {
      {KernelDtype::kBf16, 4096, 14336, 8, 2, 1, 1},      {KernelDtype::kBf16, 4096, 14336, 8, 2, 2, 1},
      {KernelDtype::kFp8Block, 4096, 1536, 128, 8, 1, 1}, {KernelDtype::kFp8Block, 3072, 1536, 256, 8, 4, 1},
      {KernelDtype::kMxfp4, 2880, 2880, 128, 4, 1, 1},    {KernelDtype::kMxfp4, 2880, 2880, 128, 4, 2, 1},
      {KernelDtype::kBf16, 5000, 1000, 64, 6, 1, 1}};
  const int n = static_cast<int>(std::size(shapes));
  const auto ask = [&shapes](const KernelDb& db, int i) {
    const Shape& s = shapes[i % 7];
    return db.moe(s.dtype, 1 + (i * 53) % 4000, s.hidden, s.inter, s.experts, s.topk, s.tp, s.ep);
  };
  std::vector<KernelTime> first;
  for (int i = 0; i < 20 * n; ++i) first.push_back(ask(*warm, i));
  int priced = 0;
  for (int i = 20 * n - 1; i >= 0; --i) {
    const KernelTime t = ask(*cold, i);
    const KernelTime& f = first[static_cast<size_t>(i)];
    CHECK(std::memcmp(&t.us, &f.us, sizeof t.us) == 0);
    CHECK(t.how == f.how);
    CHECK(std::equal(std::begin(t.cells), std::end(t.cells), std::begin(f.cells)));
    CHECK(std::memcmp(&t.outlier_us, &f.outlier_us, sizeof t.outlier_us) == 0);
    priced += std::isfinite(t.us) && t.us > 0;
  }
  CHECK(priced == 20 * n);
}

TEST_CASE("a decode row answers decode_attention to the bit at every KV length") {
  // A serving step prices its decodes through one row per batch (the searches done once):
  // every value must be decode_attention's, across batches on, between, below and beyond
  // the measured ones, KV lengths likewise, measured and approximated head shapes, an FP8
  // KV cache (compared with bf16) and the answers without a table or with bad arguments.
  const auto bits = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  // heads, KV heads, head size: measured, approximated, none
  const std::array<int, 3> kShapes[] = {{32, 8, 128}, {8, 1, 128},  {28, 4, 128},
                                        {64, 8, 96},  {16, 16, 64}, {0, 8, 128}};
  for (const char* version : {"vllm-0.14.0", "vllm-0.24.0"}) {
    CAPTURE(version);
    auto db = test::load_kernels("H100", version, {"attention-bf16", "attention-fp8"});
    int checked = 0, nonzero = 0;
    for (double batch : {0.0, 0.5, 1.0, 3.0, 8.0, 100.0, 1024.0, 5000.0})
      for (KernelDtype dtype : {KernelDtype::kBf16, KernelDtype::kFp8})
        for (const std::array<int, 3>& shape : kShapes) {
          const DecodeAttentionRow row = db->decode_attention_row(batch, shape[0], shape[1], shape[2], dtype);
          for (double kv : {-1.0, 0.0, 1.0, 15.0, 16.0, 100.0, 511.0, 1000.0, 4095.0, 65536.0, 300000.0, 1e7}) {
            CAPTURE(batch);
            CAPTURE(kv);
            CAPTURE(shape[0]);
            CAPTURE(shape[2]);
            const double want = db->decode_attention(batch, kv, shape[0], shape[1], shape[2], dtype).us;
            CHECK(bits(row.us(kv), want));
            ++checked;
            nonzero += want > 0;
          }
        }
    CHECK(checked == 8 * 2 * 6 * 12);
    CHECK(nonzero > checked / 2);
  }
  auto none = test::load_kernels("H100", "vllm-0.14.0", {"allreduce"});
  CHECK(std::isnan(none->decode_attention_row(8, 32, 8, 128, KernelDtype::kBf16).us(100)));
  auto bf16_only = test::load_kernels("H100", "vllm-0.14.0", {"attention-bf16"});
  const double fp8_alone = bf16_only->decode_attention(8, 100, 32, 8, 128, KernelDtype::kFp8).us;
  CHECK(std::isnan(fp8_alone));
  CHECK(std::isnan(bf16_only->decode_attention_row(8, 32, 8, 128, KernelDtype::kFp8).us(100)));
}

TEST_CASE("a decode row with its row values kept across batches answers to the bit") {
  // A simulation keeps each KV length's value along a table row (DecodeKvSpots) across its
  // steps, while the batch moves between rows: one keeper per shape, batches and lengths
  // visited in an order that revisits lengths under other rows. MLA and DSA module rows too.
  const auto bits = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  const double kBatches[] = {1, 3, 8, 100, 7, 1024, 5000, 2, 64, 63, 65};
  const double kLengths[] = {-1, 0, 1, 15, 16, 100, 511, 1000, 4095, 65536, 131071, 131072, 300000, 2.5};
  auto db = test::load_kernels("B200", "vllm-0.24.0", {"attention-bf16", "attention-fp8", "mla", "dsa"});
  int checked = 0, nonzero = 0;
  for (KernelDtype dtype : {KernelDtype::kBf16, KernelDtype::kFp8})
    for (const std::array<int, 3>& shape : {std::array<int, 3>{32, 8, 128}, {28, 4, 128}, {64, 8, 96}}) {
      DecodeKvSpots kept;
      for (int round = 0; round < 2; ++round)
        for (double batch : kBatches) {
          const DecodeAttentionRow row = db->decode_attention_row(batch, shape[0], shape[1], shape[2], dtype);
          for (double kv : kLengths) {
            CAPTURE(batch);
            CAPTURE(kv);
            const double want = db->decode_attention(batch, kv, shape[0], shape[1], shape[2], dtype).us;
            CHECK(bits(row.us(kv, &kept), want));
            ++checked;
            nonzero += want > 0;
          }
        }
    }
  for (KernelTable table : {KernelTable::kMlaDecode, KernelTable::kDsaDecode})
    for (KernelDtype dtype : {KernelDtype::kBf16, KernelDtype::kFp8})
      for (int heads : {128, 64, 16, 20, 0}) {
        DecodeKvSpots kept;
        for (int round = 0; round < 2; ++round)
          for (double batch : {0.0, 1.0, 3.0, 64.0, 7.0, 512.0, 4096.0, 2.0}) {
            const DecodeAttentionRow row = db->attention_module_row(table, batch, heads, dtype);
            for (double kv : kLengths) {
              CAPTURE(batch);
              CAPTURE(kv);
              CAPTURE(heads);
              const double want = db->attention_module(table, batch, kv, heads, dtype).us;
              CHECK(bits(row.us(kv, &kept), want));
              CHECK(bits(row.us(kv), want));
              ++checked;
              nonzero += want > 0;
            }
          }
      }
  CHECK(checked == 2 * 3 * 2 * 11 * 14 + 2 * 2 * 5 * 2 * 8 * 14);
  CHECK(nonzero > checked / 2);
  CHECK(std::isnan(db->attention_module_row(KernelTable::kMlaDecode, 8, 128, KernelDtype::kNvfp4).us(100)));
}
