// JSON in: the request format (the conformance-case format) -> validated Requests.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "error.h"
#include "model/model.h"

namespace stepcalc {

/// One JSON document: a request object, or an array of them.
struct RequestBatch {
  bool is_array = false;
  std::vector<Expected<Request>> requests;  ///< in document order; each may be an error
};

/// Parses a document. A document-level failure (malformed JSON, too large, not an
/// object or array) is the outer error; a bad element of an array is its own error
/// with a path starting "[i]".
Expected<RequestBatch> parse_requests(std::string_view json);

/// Parses a document that must hold exactly one request object.
Expected<Request> parse_request(std::string_view json);

/// A model from a HuggingFace config.json text (text_config merge, KV-head and FFN
/// fallbacks, dtype -> bytes per parameter). Paths start at `path` (e.g. "model").
Expected<ModelShape> parse_model_config(std::string_view json, const std::string& path = "model");

/// Model presets compiled in (names of presets/models/*.json).
std::vector<std::string> model_preset_names();
Expected<ModelShape> model_preset(const std::string& name, const std::string& path = "model");

/// Hardware presets by gpu name ("H100").
std::vector<std::string> gpu_names();
Expected<Hardware> hardware_preset(const std::string& gpu, const std::string& path = "gpu");

/// Bytes per parameter of a torch dtype name; 0 when unknown.
double bytes_per_param_of_dtype(std::string_view dtype);

}  // namespace stepcalc
