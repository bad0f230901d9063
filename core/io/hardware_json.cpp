// SPDX-License-Identifier: Apache-2.0
#include "io/hardware_json.h"

#include <algorithm>
#include <cctype>

#include "base/input_limits.h"
#include "json/json_writer.h"
#include "kernels/gpu_spec.h"

namespace stepcalc {

std::vector<std::string> gpu_names() {
  std::vector<std::string> names{"H100"};  // the reference's GPU first
  for (const GpuSpec& g : gpu_specs()) {
    if (g.name != "H100") names.push_back(g.name);
  }
  return names;
}

Expected<Hardware> hardware_preset(const std::string& gpu, const std::string& path) {
  const GpuSpec* spec = find_gpu_spec(gpu);
  if (spec == nullptr) {
    return make_error("unknown_gpu", path,
                      "Unknown GPU '" + utf8_prefix(gpu, limits::kMaxEchoBytes) + "'; available: " + gpu_spec_names() +
                          " (constants can be overridden).");
  }
  Hardware h;  // the reference's hardware_config.json H100 entry
  h.gpu = spec->name;
  if (spec->name != "H100") {
    // Another GPU: its datasheet dense BF16 TFLOP/s and HBM bandwidth (presets/gpus/),
    // with the reference's H100 MFU tables (a warning says so). The reference's own
    // hardware file has an A100-SXM entry: the same figures and bwEfficiencyFactor 0.80.
    h.tflops_peak = spec->bf16_tflops;
    h.bw_peak_tbs = spec->hbm_bw_bytes_per_s / 1e12;
    if (spec->name == "A100") h.bw_efficiency = 0.80;
  }
  return h;
}

void write_hardware_constants(JsonWriter& w, const Hardware& hw) {
  w.field("TFlopsPeak", hw.tflops_peak)
      .field("BwPeakTBs", hw.bw_peak_tbs)
      .field("bwEfficiencyFactor", hw.bw_efficiency)
      .field("perLayerOverhead", hw.per_layer_overhead_us);
}

void write_gpu_presets(JsonWriter& w) {
  w.begin_array();
  for (const std::string& gpu : gpu_names()) {
    auto hw = hardware_preset(gpu);
    if (!hw) continue;
    w.begin_object().field("name", gpu);
    write_hardware_constants(w, hw.value());
    w.end_object();
  }
  w.end_array();
}

Expected<Hardware> hardware_from_json(json::element e, Hardware hw, const json::Path& path) {
  auto read = json::read_fields(
      e, path, [&](std::string_view key, json::element value, const json::Path& where) -> Expected<bool> {
        double* target = nullptr;
        // Zero and negative values are refused by the step model (invalid_value); here
        // only magnitudes that could push a time to infinity or a denormal.
        double low = 0, high = 0;
        if (key == "TFlopsPeak") {
          target = &hw.tflops_peak, low = limits::kMinTflopsPeak, high = limits::kMaxTflopsPeak;
        } else if (key == "BwPeakTBs") {
          target = &hw.bw_peak_tbs, low = limits::kMinBwPeakTBs, high = limits::kMaxBwPeakTBs;
        } else if (key == "bwEfficiencyFactor") {
          target = &hw.bw_efficiency;  // 0 or (0, 1], checked by the step model
        } else if (key == "perLayerOverhead") {
          target = &hw.per_layer_overhead_us, high = limits::kMaxPerLayerOverheadUs;
        } else if (key == "MemoryGiB") {
          return true;  // in the reference's hardware file; unused
        } else {
          return json::unknown_field(path, key, "TFlopsPeak, BwPeakTBs, bwEfficiencyFactor, perLayerOverhead");
        }
        auto v = json::read_number(value, where);
        if (!v) return v.error();
        *target = v.value();
        if (high > 0 && v.value() > 0 && (v.value() < low || v.value() > high)) {
          const std::string at = where.str();
          return make_error("out_of_range", at,
                            at + " must be in [" + format_double(low) + ", " + format_double(high) + "].");
        }
        return true;
      });
  if (!read) return read.error();
  return hw;
}

}  // namespace stepcalc
