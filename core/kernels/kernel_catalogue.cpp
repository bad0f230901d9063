// SPDX-License-Identifier: Apache-2.0
// KernelSet from the summary tools/pack-kernels.mjs compiled in.
#include "kernels/kernel_catalogue.h"

namespace stepcalc {

std::string KernelSet::file_name(const std::string& part) const {
  std::string lower;
  for (char c : gpu) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return lower + "-" + version + "-" + part + ".bin";
}

const std::vector<KernelSet>& kernel_sets() {
  static const std::vector<KernelSet> sets = [] {
    std::vector<KernelSet> out;
    for (size_t i = 0; i < embedded::kKernelSetCount; ++i) {
      const embedded::KernelSetInfo& e = embedded::kKernelSets[i];
      KernelSet s;
      s.gpu = e.gpu;
      s.version = e.version;
      s.parts.assign(e.parts, e.parts + e.part_count);
      KernelCoverage& c = s.coverage;
      if (e.head_dims) c.attention_head_dims.assign(e.head_dims, e.head_dims + e.head_dim_count);
      if (e.allreduce_tps) c.allreduce_tps.assign(e.allreduce_tps, e.allreduce_tps + e.allreduce_tp_count);
      if (e.gemm_dtypes) c.gemm_dtypes.assign(e.gemm_dtypes, e.gemm_dtypes + e.gemm_dtype_count);
      if (e.kv_dtypes) c.kv_dtypes.assign(e.kv_dtypes, e.kv_dtypes + e.kv_dtype_count);
      if (e.moe_dtypes) c.moe_dtypes.assign(e.moe_dtypes, e.moe_dtypes + e.moe_dtype_count);
      c.has_mla = e.has_mla;
      c.has_gdn = e.has_gdn;
      c.has_dsa = e.has_dsa;
      c.has_kda = e.has_kda;
      out.push_back(std::move(s));
    }
    return out;
  }();
  return sets;
}

const KernelSet* find_kernel_set(const std::string& gpu, const std::string& version) {
  for (const KernelSet& s : kernel_sets()) {
    if (s.gpu == gpu && s.version == version) return &s;
  }
  return nullptr;
}

}  // namespace stepcalc
