// SPDX-License-Identifier: Apache-2.0
#include "io/hardware_json.h"

#include <algorithm>
#include <cctype>

#include "input_limits.h"
#include "io/json_writer.h"

namespace stepcalc {

std::vector<std::string> gpu_names() { return {"H100"}; }

Expected<Hardware> hardware_preset(const std::string& gpu, const std::string& path) {
  std::string upper = gpu;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  if (upper == "H100") return Hardware{};  // the reference's hardware_config.json H100 entry
  return make_error("unknown_gpu", path,
                    "No MFU tables for GPU '" + utf8_prefix(gpu, json::kMaxEchoBytes) +
                        "'; available: H100 (constants can be overridden).");
}

Expected<Hardware> hardware_from_json(json::element e, Hardware hw, const json::Path& path) {
  json::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return json::type_error(path, e, "an object");
  for (auto field : o) {
    const json::Path where = path.key(field.key);
    double* target = nullptr;
    // Zero and negative values are refused by the step model (invalid_value); here
    // only magnitudes that could push a time to infinity or a denormal.
    double low = 0, high = 0;
    if (field.key == "TFlopsPeak") {
      target = &hw.tflops_peak, low = limits::kMinTflopsPeak, high = limits::kMaxTflopsPeak;
    } else if (field.key == "BwPeakTBs") {
      target = &hw.bw_peak_tbs, low = limits::kMinBwPeakTBs, high = limits::kMaxBwPeakTBs;
    } else if (field.key == "bwEfficiencyFactor") {
      target = &hw.bw_efficiency;  // 0 or (0, 1], checked by the step model
    } else if (field.key == "perLayerOverhead") {
      target = &hw.per_layer_overhead_us, high = limits::kMaxPerLayerOverheadUs;
    } else if (field.key == "MemoryGiB") {
      continue;  // in the reference's hardware file; unused
    } else {
      return json::unknown_field(path, field.key, "TFlopsPeak, BwPeakTBs, bwEfficiencyFactor, perLayerOverhead");
    }
    auto v = json::read_number(field.value, where);
    if (!v) return v.error();
    *target = v.value();
    if (high > 0 && v.value() > 0 && (v.value() < low || v.value() > high)) {
      const std::string at = where.str();
      return make_error("out_of_range", at,
                        at + " must be in [" + format_double(low) + ", " + format_double(high) + "].");
    }
  }
  return hw;
}

}  // namespace stepcalc
