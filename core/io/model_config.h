// SPDX-License-Identifier: Apache-2.0
// A HuggingFace config.json -> ModelShape: the text_config merge, the KV-head and FFN
// fallbacks, dtype -> bytes per parameter, the compiled-in presets, and notes on the
// config features the step model ignores.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "json/json_read.h"
#include "model/model.h"

namespace stepcalc {

/// A model from a HuggingFace config.json text. Paths start at `path` (e.g. "model").
Expected<ModelShape> parse_model_config(std::string_view json, const std::string& path = "model");

/// The same from a config object already parsed (a request's `model` field).
Expected<ModelShape> model_from_config(json::object config, const json::Path& path);

/// A note the model may carry about a config feature the step model ignores: its
/// code and the config keys that raise it (the message comes with the note).
struct ConfigNoteInfo {
  const char* code;
  std::vector<const char*> keys;
};

/// Every note model_from_config may add.
const std::vector<ConfigNoteInfo>& config_notes();

/// The fields of a resolved model, as the result's `model` object and the presets
/// name them (HuggingFace names).
const std::vector<const char*>& model_shape_fields();

/// A request's `model` value: a preset name (string) or a config object.
Expected<ModelShape> model_from_json(json::element model, const json::Path& path);

/// The same from JSON text (a quoted preset name or a config object); errors have
/// paths from `path`.
Expected<ModelShape> parse_model_value(std::string_view json, const std::string& path = "model");

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
