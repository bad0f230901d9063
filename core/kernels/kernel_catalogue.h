// SPDX-License-Identifier: Apache-2.0
// What the kernel packs of this build hold, compiled into the core by
// tools/pack-kernels.mjs: per GPU and vLLM version the parts (files) with their sizes
// and the shapes measured. Lets the catalogue and error messages list every GPU's
// tables without loading a pack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel_db.h"

namespace stepcalc {

/// One pack file: part name ("gemm-bf16", "attention-fp8", "allreduce", "moe", "mla", "gdn",
/// "dsa")
/// and its size, raw and gzipped (bytes).
struct KernelPartInfo {
  const char* name;
  uint32_t bytes;
  uint32_t gzip_bytes;
};

namespace embedded {

struct KernelSetInfo {
  const char* gpu;
  const char* version;
  const KernelPartInfo* parts;
  size_t part_count;
  const int* head_dims;
  size_t head_dim_count;
  const int* allreduce_tps;
  size_t allreduce_tp_count;
  const KernelDtype* gemm_dtypes;
  size_t gemm_dtype_count;
  const KernelDtype* kv_dtypes;
  size_t kv_dtype_count;
  const KernelDtype* moe_dtypes;
  size_t moe_dtype_count;
  bool has_mla;
  bool has_gdn;
  bool has_dsa;
  bool has_kda;
  bool is_default;  ///< the GPU's default version
  /// The coverage as JSON text ({gemm_dtypes, ..., moe_shapes, mla, gdn, dsa, kda}), written verbatim
  /// (the MoE shapes are only here).
  const char* coverage_json;
};
extern const KernelSetInfo kKernelSets[];
extern const size_t kKernelSetCount;

}  // namespace embedded

/// The measured tables of one GPU and version, as built.
struct KernelSet {
  std::string gpu;      ///< "H100"
  std::string version;  ///< "vllm-0.14.0"
  std::vector<KernelPartInfo> parts;
  KernelCoverage coverage;
  /// The pack file of `part`: "h100-vllm-0.14.0-gemm-bf16.bin".
  std::string file_name(const std::string& part) const;
};

/// Every GPU and version built, in bench_data/aic/ order.
const std::vector<KernelSet>& kernel_sets();

/// The set of `gpu` (exact name) and `version`, or nullptr.
const KernelSet* find_kernel_set(const std::string& gpu, const std::string& version);

}  // namespace stepcalc
