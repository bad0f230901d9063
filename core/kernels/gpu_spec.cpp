// SPDX-License-Identifier: Apache-2.0
// GpuSpec from the GPU presets compiled in by tools/pack-tables.mjs.
#include "kernels/gpu_spec.h"

#include <cctype>

#include "kernels/embedded_data.h"

namespace stepcalc {

namespace {

std::vector<std::string> split_commas(const char* text) {
  std::vector<std::string> out;
  std::string item;
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c == ',') {
      out.push_back(item);
      item.clear();
    } else {
      item += *c;
    }
  }
  if (!item.empty()) out.push_back(item);
  return out;
}

GpuSpec from_preset(const embedded::GpuPresetData& d) {
  GpuSpec g;
  static_cast<GpuConstants&>(g) = d.constants;
  g.name = d.name;
  g.device = d.device;
  g.interconnect = d.interconnect;
  g.nccl_mem_bytes.assign(d.nccl_mem_bytes, d.nccl_mem_bytes + 4);
  g.kernel_versions = split_commas(d.kernels);
  g.default_kernels = d.default_kernels;
  g.aic_system = d.aic_system;
  g.kernels_from = d.kernels_from;
  return g;
}

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

}  // namespace

double GpuSpec::nccl_mem_at_tp(int tp) const {
  if (nccl_mem_bytes.empty() || tp <= 1) return nccl_mem_bytes.empty() ? 0 : nccl_mem_bytes[0];
  size_t index = 0;
  for (int t = 1; t < tp && index + 1 < nccl_mem_bytes.size(); t *= 2) ++index;
  return nccl_mem_bytes[index];
}

const std::vector<GpuSpec>& gpu_specs() {
  static const std::vector<GpuSpec> specs = [] {
    std::vector<GpuSpec> out;
    for (size_t i = 0; i < embedded::kGpuPresetCount; ++i) out.push_back(from_preset(embedded::kGpuPresets[i]));
    return out;
  }();
  return specs;
}

const GpuSpec* find_gpu_spec(std::string_view name) {
  for (const GpuSpec& g : gpu_specs()) {
    if (same_name(g.name, name) || (!g.aic_system.empty() && same_name(g.aic_system, name))) return &g;
  }
  return nullptr;
}

std::string gpu_spec_names() {
  std::string out;
  for (const GpuSpec& g : gpu_specs()) out += (out.empty() ? "" : ", ") + g.name;
  return out;
}

}  // namespace stepcalc
