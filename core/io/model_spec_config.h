// SPDX-License-Identifier: Apache-2.0
// A HuggingFace config.json -> ModelSpec: everything vLLM needs to know to run the
// model (head_dim, MoE layout per family, MLA ranks, FP8 quantization, windows), with
// notes on what the operator list only approximates. Lenient by design: the shape the
// reference reads is validated by model_config; a malformed optional field here is
// noted and ignored, never an error, so `blis-v2` accepts exactly what it did before.
#pragma once

#include <vector>

#include "model/model.h"
#include "simdjson.h"

namespace stepcalc {

/// The spec of `config` (its `text_config` merged over the top level), whose basic
/// dimensions `shape` already holds (validated, after the KV-head and FFN fallbacks).
ModelSpec model_spec_from_config(simdjson::dom::object config, const ModelShape& shape);

/// Every config key model_spec_from_config reads, at the top level or in `text_config`
/// (`top_only`: the top level alone), beyond the shape fields: a config reduced to its shape
/// and these keys (text_config's merged over the top's) gives the same spec. The page keeps
/// a config so (catalogue `model_config.spec_keys`, web/model-shape.js).
struct SpecKeys {
  std::vector<const char*> merged, top_only;
};
const SpecKeys& model_spec_keys();

/// The spec of a model given only by the reference's explicit fields (`shape`).
ModelSpec model_spec_from_shape(const ModelShape& shape);

}  // namespace stepcalc
