// SPDX-License-Identifier: Apache-2.0
// JSON out for a resolved model: the shape fields the result's `model` object, the
// presets and resolve_model_json (api.h) share, written in one place.
#pragma once

#include <string>

#include "json/json_writer.h"
#include "model/model.h"

namespace stepcalc {

/// The shape fields of `m` (num_hidden_layers ... vocab_size, head_dim) into the open
/// object of `w`, in the order the result object has always had.
void write_model_shape(JsonWriter& w, const ModelShape& m);

/// The notes of `m` as an array of {code, message}.
void write_model_notes(JsonWriter& w, const ModelShape& m);

/// A resolved model: {preset, source, shape fields, torch_dtype, notes}; `preset` is
/// the preset's canonical name or null.
std::string resolved_model_to_json(const ModelShape& m);

}  // namespace stepcalc
