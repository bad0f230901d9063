// SPDX-License-Identifier: Apache-2.0
// Model specs written by hand from public HuggingFace configs, shared by the core tests.
#pragma once

#include "model/model_spec.h"

namespace stepcalc::fixtures {

/// Llama-2-70B as its HF config describes it (80 layers, GQA 64/8, FFN 28672, vocab 32000).
inline ModelSpec llama2_70b() {
  ModelSpec s;
  s.num_layers = 80;
  s.hidden_size = 8192;
  s.num_heads = 64;
  s.num_kv_heads = 8;
  s.head_dim = 128;
  s.intermediate_size = 28672;
  s.vocab_size = 32000;
  return s;
}

}  // namespace stepcalc::fixtures
