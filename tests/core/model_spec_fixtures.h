// SPDX-License-Identifier: Apache-2.0
// Model specs for the core tests, read from the HuggingFace configs compiled in as
// presets (presets/models/), so a test's model is the one the product ships.
#pragma once

#include <string>

#include "doctest.h"
#include "io/model_config.h"
#include "model/model_spec.h"

namespace stepcalc::fixtures {

/// The spec of preset `name`; fails the test if the preset is unknown.
inline ModelSpec preset_spec(const std::string& name) {
  Expected<ModelShape> shape = model_preset(name);
  REQUIRE_MESSAGE(shape.ok(), name);
  return shape.value().spec;
}

/// Llama-2-70B (80 layers, GQA 64/8, FFN 28672, vocab 32000).
inline ModelSpec llama2_70b() { return preset_spec("llama-2-70b-hf"); }

/// Mixtral-8x7B (32 layers, 8 experts of width 14336, top 2).
inline ModelSpec mixtral() { return preset_spec("mixtral-8x7b-v0.1"); }

}  // namespace stepcalc::fixtures
