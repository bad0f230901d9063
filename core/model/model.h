// SPDX-License-Identifier: Apache-2.0
// The model as the reference step model sees it: a few shape fields, beside the whole
// ModelSpec the measured mode, memory and serving read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"
#include "model/model_spec.h"

namespace stepcalc {

/// Transformer shape as the step model sees it (HuggingFace config names in comments).
struct ModelShape {
  int64_t num_layers = 0;         ///< L, num_hidden_layers
  int64_t hidden_size = 0;        ///< d, hidden_size
  int64_t num_heads = 0;          ///< H, num_attention_heads
  int64_t num_kv_heads = 0;       ///< Hkv, after the KV-head fallbacks
  int64_t intermediate_size = 0;  ///< dFF, after the ffn fallbacks (4*d)
  double bytes_per_param = 0;     ///< bpp, from the dtype or given explicitly
  int64_t vocab_size = 0;         ///< informational; the reference ignores it
  std::string source;             ///< "preset:NAME", "config" (HF object) for display
  std::string preset;             ///< the preset's name when the model is one, else empty
  std::string dtype;              ///< dtype name the bpp came from, if any
  std::vector<Warning> notes;     ///< config features the step model ignores (MoE, MLA, ...)
  int64_t linear_layers = 0;      ///< gated DeltaNet or KDA layers, as the config was checked (0: none)
  ModelSpec spec;                 ///< the whole model, for the measured mode, memory and serving
};

}  // namespace stepcalc
