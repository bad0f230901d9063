// SPDX-License-Identifier: Apache-2.0
// GPU presets by name and a request's `hardware` object (the reference's
// hardware_config.json constants, each overridable within input_limits.h).
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "json/json_read.h"
#include "json/json_writer.h"
#include "request/request.h"

namespace stepcalc {

/// GPU names: "H100" (the reference's tables) first, then the other presets/gpus/.
std::vector<std::string> gpu_names();

/// The reference model's constants of a GPU by name (case-insensitive): H100 as the
/// reference; another GPU its datasheet TFlopsPeak (dense BF16) and BwPeakTBs from
/// presets/gpus/ (the MFU tables stay H100's). unknown_gpu otherwise.
Expected<Hardware> hardware_preset(const std::string& gpu, const std::string& path = "gpu");

/// The `hardware` object's fields, in the order the catalogue and results write them.
inline constexpr const char* kHardwareFields[] = {"TFlopsPeak", "BwPeakTBs", "bwEfficiencyFactor", "perLayerOverhead"};

/// `hw` with the fields of a `hardware` object applied (TFlopsPeak, BwPeakTBs,
/// bwEfficiencyFactor, perLayerOverhead; MemoryGiB is accepted and unused).
Expected<Hardware> hardware_from_json(json::element e, Hardware hw, const json::Path& path);

/// The four constants of `hw` (TFlopsPeak, BwPeakTBs, bwEfficiencyFactor,
/// perLayerOverhead) into the open object of `w`.
void write_hardware_constants(JsonWriter& w, const Hardware& hw);

/// Every GPU preset as an array of {name, constants...}.
void write_gpu_presets(JsonWriter& w);

}  // namespace stepcalc
