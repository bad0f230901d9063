// SPDX-License-Identifier: Apache-2.0
// Helpers for the kernel database tests: the packs of the build tree
// (STEPCALC_KERNELS_DIR) and the CSVs they came from.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "doctest.h"
#include "kernels/kernel_catalogue.h"
#include "kernels/kernel_db.h"
#include "kernels/kernel_registry.h"
#include "test_support.h"

namespace stepcalc::test {

inline std::string read_kernel_pack(const std::string& file) {
  std::ifstream in(std::string(STEPCALC_KERNELS_DIR) + "/" + file, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read the kernel pack " << file << " (build the project first)");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// bench_data/aic/<gpu>/<version>/<csv>.csv
inline std::string aic_csv_path(const std::string& gpu, const std::string& version, const std::string& csv) {
  std::string lower;
  for (char c : gpu) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return "bench_data/aic/" + lower + "/" + version + "/" + csv + ".csv";
}

/// The database of `parts` (all parts when empty) of a GPU and version.
inline std::shared_ptr<const KernelDb> load_kernels(const std::string& gpu, const std::string& version,
                                                    std::vector<std::string> parts = {}) {
  const KernelSet* set = find_kernel_set(gpu, version);
  REQUIRE_MESSAGE(set != nullptr, gpu << " " << version);
  if (parts.empty()) {
    for (const KernelPartInfo& p : set->parts) parts.push_back(p.name);
  }
  // The bytes must outlive the decoding only; KernelDb copies what it keeps.
  std::vector<std::string> files;
  for (const std::string& p : parts) files.push_back(read_kernel_pack(set->file_name(p)));
  std::vector<PackBytes> spans;
  for (const std::string& f : files) spans.push_back({reinterpret_cast<const uint8_t*>(f.data()), f.size()});
  auto db = KernelDb::unpack_parts(spans);
  REQUIRE_MESSAGE(db.ok(), db.error().message);
  return db.value();
}

/// Adds every pack of `gpu`'s default kernel version to `registry`, decoded at once or,
/// with `deferred`, when first used.
inline void add_default_packs(KernelRegistry* registry, const std::string& gpu, bool deferred = false) {
  auto which = resolve_kernels(gpu, "");
  REQUIRE_MESSAGE(which.ok(), gpu);
  const KernelSet* set = find_kernel_set(which->first, which->second);
  REQUIRE(set != nullptr);
  for (const KernelPartInfo& p : set->parts) {
    const std::string bytes = read_kernel_pack(set->file_name(p.name));
    const uint8_t* data = reinterpret_cast<const uint8_t*>(bytes.data());
    auto added = deferred ? registry->add_pack_deferred(data, bytes.size()) : registry->add_pack(data, bytes.size());
    REQUIRE_MESSAGE(added.ok(), added.error().message);
  }
}

/// Data rows of a CSV as text cells (header dropped).
/// The KernelDtype a CSV's dtype column names ("bf16", "fp8", "fp8_block", ...).
inline KernelDtype dtype_named(const std::string& name) {
  for (int d = 0; d < kKernelDtypeCount; ++d)
    if (name == kernel_dtype_name(static_cast<KernelDtype>(d))) return static_cast<KernelDtype>(d);
  return KernelDtype::kBf16;
}

inline std::vector<std::vector<std::string>> csv_rows(const std::string& path) {
  std::istringstream in(read_file(path));
  std::string line;
  std::getline(in, line);
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream s(line);
    std::string cell;
    while (std::getline(s, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

/// A `measured` request of `model` on `gpu` at `tp` with `step` as JSON (`extra`: more fields,
/// each after a comma), as the model-family tests (linear, sparse attention, KDA) build them.
inline Request measured_request(const std::string& model, const std::string& gpu, int tp, const std::string& step,
                                const std::string& extra = "") {
  return request_or_fail(R"({"model": ")" + model + R"(", "gpu": ")" + gpu + R"(", "tp": )" + std::to_string(tp) +
                         R"(, "mode": "measured", "step": )" + step + extra + "}");
}

/// A step of `count` decodes at `kv`, as JSON.
inline std::string decodes_json(int count, int64_t kv) {
  std::string s = R"({"decode_requests": [)";
  for (int i = 0; i < count; ++i) s += std::string(i ? "," : "") + R"({"progress_index": )" + std::to_string(kv) + "}";
  return s + "]}";
}

/// A step of one prefill chunk of `tokens` after `prefix` cached ones, as JSON.
inline std::string prefill_json(int64_t tokens, int64_t prefix = 0) {
  return R"({"prefill_requests": [{"progress_index": )" + std::to_string(prefix) + R"(, "num_new_prefill_tokens": )" +
         std::to_string(tokens) + "}]}";
}

/// `gpu`'s vllm-0.24.0 kernel set with every part, loaded once per test binary.
inline std::shared_ptr<const KernelDb> kernels_0240(const std::string& gpu) {
  static std::vector<std::pair<std::string, std::shared_ptr<const KernelDb>>> cache;
  for (const auto& [k, db] : cache)
    if (k == gpu) return db;
  cache.emplace_back(gpu, load_kernels(gpu, "vllm-0.24.0"));
  return cache.back().second;
}

}  // namespace stepcalc::test
