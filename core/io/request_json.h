// SPDX-License-Identifier: Apache-2.0
// JSON in: the request format (the conformance-case format) -> validated Requests.
// The parts of a request are read by their own files: io/model_config (model),
// io/hardware_json (gpu, hardware), io/step_json (step), io/mode_json (corrected).
#pragma once

#include <string_view>
#include <vector>

#include "error.h"
#include "io/hardware_json.h"
#include "io/model_config.h"
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
/// `mode_override` (if non-empty) replaces every request's mode before the mode-
/// dependent checks (the measured mode accepts any GPU with measured kernels).
Expected<RequestBatch> parse_requests(std::string_view json, const std::string& mode_override = "");

/// Parses a document that must hold exactly one request object.
Expected<Request> parse_request(std::string_view json);

}  // namespace stepcalc
