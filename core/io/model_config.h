// SPDX-License-Identifier: Apache-2.0
// A HuggingFace config.json -> ModelShape: the text_config merge, the KV-head and FFN
// fallbacks, dtype -> bytes per parameter, the compiled-in presets, and notes on the
// config features the step model ignores.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "error.h"
#include "io/json_read.h"
#include "model/model.h"

namespace stepcalc {

/// A model from a HuggingFace config.json text. Paths start at `path` (e.g. "model").
Expected<ModelShape> parse_model_config(std::string_view json, const std::string& path = "model");

/// The same from a config object already parsed (a request's `model` field).
Expected<ModelShape> model_from_config(json::object config, const json::Path& path);

/// Model presets compiled in (names of presets/models/*.json).
std::vector<std::string> model_preset_names();

/// A preset by name; case and any "org/" prefix are ignored ("meta-llama/Llama-3.1-8B").
Expected<ModelShape> model_preset(const std::string& name, const std::string& path = "model");

/// A dtype and its bytes per parameter (the dtypes a config may name).
struct DtypeBytes {
  const char* name;
  double bytes_per_param;
};
/// Every known dtype, in the order the error message lists them.
const std::vector<DtypeBytes>& known_dtypes();

/// Bytes per parameter of a torch dtype name; 0 when unknown.
double bytes_per_param_of_dtype(std::string_view dtype);

}  // namespace stepcalc
