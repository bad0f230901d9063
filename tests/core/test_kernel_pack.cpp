// SPDX-License-Identifier: Apache-2.0
// The kernel packs built from bench_data/aic/: every row of every CSV comes back
// exactly (keys and latency) from its pack, and hostile bytes give errors, never crashes.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "doctest.h"
#include "kernel_test_support.h"
#include "kernels/kernel_catalogue.h"
#include "kernels/kernel_pack.h"

using namespace stepcalc;

namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream s(line);
  std::string cell;
  while (std::getline(s, cell, ',')) out.push_back(cell);
  return out;
}

// The key values of row `leaf`, walking up the trie.
std::vector<int64_t> keys_of(const MeasuredTable& t, uint32_t leaf) {
  std::vector<int64_t> keys(t.levels.size());
  uint32_t node = leaf;
  for (int d = t.last_level(); d >= 0; --d) {
    keys[d] = t.levels[d].value[node];
    node = t.levels[d].parent[node];
  }
  return keys;
}

}  // namespace

TEST_CASE("kernel packs: every CSV row round-trips exactly (keys and latency)") {
  // H100 and H200 x 2 versions, B200, A100, L40S, B300, GB200, GB300, RTX-PRO-6000, B60.
  REQUIRE(kernel_sets().size() == 12);
  size_t rows_checked = 0;
  for (const KernelSet& set : kernel_sets()) {
    for (const KernelPartInfo& part : set.parts) {
      const std::string bytes = test::read_kernel_pack(set.file_name(part.name));
      CHECK(bytes.size() == part.bytes);
      auto pack = decode_pack(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      REQUIRE_MESSAGE(pack.ok(), pack.error().message);
      CHECK(pack->gpu == set.gpu);
      CHECK(pack->version == set.version);
      CHECK(pack->part == part.name);
      for (const auto& table : pack->tables) {
        const std::string path = test::aic_csv_path(set.gpu, set.version, table->csv);
        std::istringstream csv(test::read_file(path));
        std::string line;
        std::getline(csv, line);
        const std::vector<std::string> header = split(line);
        const bool has_dtype = header[0] == "dtype" || header[0] == "kv_dtype";
        const std::string dtype = kernel_dtype_name(table->dtype);
        REQUIRE(header.size() == table->keys.size() + (has_dtype ? 2 : 1));
        for (uint32_t i = 0; i < table->first_row && std::getline(csv, line);) ++i;
        for (uint32_t leaf = 0; leaf < table->latency_us.size(); ++leaf) {
          REQUIRE(std::getline(csv, line));
          const std::vector<std::string> cells = split(line);
          if (has_dtype) REQUIRE_MESSAGE(cells[0] == dtype, path << " row " << leaf + table->first_row);
          const std::vector<int64_t> keys = keys_of(*table, leaf);
          for (size_t c = 0; c < keys.size(); ++c) {
            REQUIRE_MESSAGE(std::to_string(keys[c]) == cells[c + (has_dtype ? 1 : 0)], path << " line " << line);
          }
          // The decoded double is the one the CSV text denotes (strtod), bit for bit.
          REQUIRE_MESSAGE(table->latency_us[leaf] == std::strtod(cells.back().c_str(), nullptr), path << " " << line);
          ++rows_checked;
        }
        if (std::getline(csv, line) && has_dtype) CHECK(split(line)[0] != dtype);  // the table took all its rows
      }
    }
  }
  MESSAGE(rows_checked << " rows checked");
  CHECK(rows_checked > 700000);
}

TEST_CASE("kernel packs: latency codes are monotone and 3 digits") {
  CHECK(latency_of_code(code_of_latency(12.2)) == 12.2);
  CHECK(latency_of_code(code_of_latency(0.5)) == 0.5);
  CHECK(latency_of_code(code_of_latency(60600)) == 60600);
  CHECK(latency_of_code(code_of_latency(12.24)) == 12.2);
  CHECK(latency_of_code(code_of_latency(12.26)) == 12.3);
  CHECK(code_of_latency(99.9) < code_of_latency(100));
  CHECK(code_of_latency(100) + 1 == code_of_latency(101));
}

TEST_CASE("kernel packs: truncated, corrupt and hostile bytes give errors naming the GPU") {
  const std::string bytes = test::read_kernel_pack("h100-vllm-0.14.0-allreduce.bin");
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto db = KernelDb::unpack(data, n);
    REQUIRE_FALSE(db.ok());
    CHECK(db.error().code == "corrupt_kernels");
    if (n > 40) CHECK(db.error().message.find("H100 vllm-0.14.0") != std::string::npos);
  }
  REQUIRE(KernelDb::unpack(data, bytes.size()).ok());
  // Every single-byte change is refused by the checksum (before it, a changed latency
  // byte decoded into a different price).
  std::string copy = bytes;
  for (size_t i = 0; i < copy.size(); ++i) {
    for (int v : {0x00, 0x7f, 0x80, 0xff}) {
      const char saved = copy[i];
      if (static_cast<char>(v) == saved) continue;
      copy[i] = static_cast<char>(v);
      auto db = KernelDb::unpack(reinterpret_cast<const uint8_t*>(copy.data()), copy.size());
      REQUIRE_FALSE(db.ok());
      CHECK(db.error().code == "corrupt_kernels");
      copy[i] = saved;
    }
  }
  const uint8_t junk[] = {'S', 'C', 'K', '2', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
  CHECK_FALSE(KernelDb::unpack(junk, sizeof junk).ok());
  CHECK_FALSE(KernelDb::unpack(nullptr, 0).ok());
}

TEST_CASE("kernel packs: random damage (flips, cuts, splices) never crashes and never yields NaN") {
  // A fixed-seed generator: the same cases every run (and under the sanitizer build).
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  auto next = [&state](uint64_t bound) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return bound == 0 ? 0 : state % bound;
  };
  for (const char* file :
       {"h100-vllm-0.14.0-gemm-fp8.bin", "a100-vllm-0.14.0-attention-bf16.bin", "b200-vllm-0.24.0-mla.bin"}) {
    const std::string good = test::read_kernel_pack(file);
    int accepted = 0;
    for (int round = 0; round < 300; ++round) {
      std::string bytes = good;
      const uint64_t kind = next(3);
      if (kind == 0) {
        for (int k = 0; k < 1 + static_cast<int>(next(4)); ++k)
          bytes[next(bytes.size())] ^= static_cast<char>(1 << next(8));
      } else if (kind == 1) {
        bytes.resize(next(bytes.size()));
      } else {
        const size_t at = next(bytes.size()), from = next(bytes.size());
        bytes.replace(at, next(64), good.substr(from, next(64)));
      }
      auto db = KernelDb::unpack(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      if (!db.ok()) {
        CHECK(db.error().code == "corrupt_kernels");
        continue;
      }
      ++accepted;  // only a change the checksum cannot see (none in these rounds)
      const KernelDb& d = *db.value();
      const double t = d.gemm(KernelDtype::kFp8, 100, 4096, 4096).us +
                       d.decode_attention(8, 1000, 32, 8, 128, KernelDtype::kBf16).us +
                       d.mla_decode(4, 1000, 16, KernelDtype::kBf16).us;
      CHECK((std::isnan(t) || t >= 0));  // NaN only from a table this part does not hold
    }
    MESSAGE(std::string(file) << ": " << accepted << " of 300 damaged copies still decode");
    CHECK(accepted == 0);
  }
}

TEST_CASE("kernel packs: parts of one GPU and version join; others are refused") {
  auto h100 = test::load_kernels("H100", "vllm-0.14.0", {"gemm-bf16", "attention-bf16", "allreduce"});
  CHECK(h100->parts() == std::vector<std::string>{"allreduce", "attention-bf16", "gemm-bf16"});
  CHECK(h100->has(KernelTable::kGemm, KernelDtype::kBf16));
  CHECK_FALSE(h100->has(KernelTable::kGemm, KernelDtype::kFp8));
  CHECK(h100->gpu().name == "H100");
  CHECK(h100->version() == "vllm-0.14.0");
  const std::string a = test::read_kernel_pack("h100-vllm-0.14.0-allreduce.bin");
  const std::string b = test::read_kernel_pack("h200-vllm-0.14.0-allreduce.bin");
  auto mixed = KernelDb::unpack_parts(
      {{reinterpret_cast<const uint8_t*>(a.data()), a.size()}, {reinterpret_cast<const uint8_t*>(b.data()), b.size()}});
  REQUIRE_FALSE(mixed.ok());
  CHECK(mixed.error().message.find("H200") != std::string::npos);
  auto twice = KernelDb::unpack_parts(
      {{reinterpret_cast<const uint8_t*>(a.data()), a.size()}, {reinterpret_cast<const uint8_t*>(a.data()), a.size()}});
  CHECK_FALSE(twice.ok());
}
