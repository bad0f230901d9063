// SPDX-License-Identifier: Apache-2.0
#include "io/model_json.h"

namespace stepcalc {

void write_model_shape(JsonWriter& w, const ModelShape& m) {
  w.field("num_hidden_layers", m.num_layers)
      .field("hidden_size", m.hidden_size)
      .field("num_attention_heads", m.num_heads)
      .field("num_key_value_heads", m.num_kv_heads)
      .field("intermediate_size", m.intermediate_size)
      .field("bytes_per_param", m.bytes_per_param)
      .field("vocab_size", m.vocab_size)
      .field("head_dim", m.num_heads > 0 ? m.hidden_size / m.num_heads : 0);
}

void write_model_notes(JsonWriter& w, const ModelShape& m) {
  w.begin_array();
  for (const Warning& n : m.notes) w.begin_object().field("code", n.code).field("message", n.message).end_object();
  w.end_array();
}

std::string resolved_model_to_json(const ModelShape& m) {
  JsonWriter w;
  w.begin_object().key("preset");
  if (m.preset.empty())
    w.null();
  else
    w.value(m.preset);
  w.field("source", m.source);
  write_model_shape(w, m);
  w.field("torch_dtype", m.dtype).key("notes");
  write_model_notes(w, m);
  // How the measured mode reads the config (what the shape above does not hold): two models
  // with the same shape, notes and spec price alike in every mode.
  const ModelSpec& s = m.spec;
  w.key("spec").begin_object();
  w.fields({{"model_type", s.model_type},
            {"architecture", s.architecture},
            {"head_dim", s.head_dim},
            {"max_model_len", s.max_model_len},
            {"tie_word_embeddings", s.tie_word_embeddings},
            {"activation", s.activation},
            {"qk_norm", s.qk_norm},
            {"qk_norm_all_heads", s.qk_norm_all_heads},
            {"sliding_window", s.sliding_window},
            {"sliding_layers", s.sliding_layers},
            {"attention_chunk", s.attention_chunk},
            {"has_vision", s.has_vision}});
  w.object("quantization", {{"method", s.quant.method},
                            {"format", weight_format_name(s.quant.format)},
                            {"attention", s.quant.attention},
                            {"mlp", s.quant.mlp},
                            {"experts", s.quant.experts},
                            {"group_size", s.quant.group_size},
                            {"kv_fp8", s.quant.kv_fp8}});
  w.object("moe", {{"num_experts", s.moe.num_experts},
                   {"top_k", s.moe.top_k},
                   {"expert_intermediate", s.moe.expert_intermediate},
                   {"shared_experts", s.moe.shared_experts},
                   {"shared_intermediate", s.moe.shared_intermediate},
                   {"num_moe_layers", s.moe.num_moe_layers},
                   {"dense_intermediate", s.moe.dense_intermediate}});
  w.object("mla", {{"kv_lora_rank", s.mla.kv_lora_rank},
                   {"q_lora_rank", s.mla.q_lora_rank},
                   {"qk_nope_head_dim", s.mla.qk_nope_head_dim},
                   {"qk_rope_head_dim", s.mla.qk_rope_head_dim},
                   {"v_head_dim", s.mla.v_head_dim}});
  w.end_object().end_object();
  return w.take();
}

}  // namespace stepcalc
