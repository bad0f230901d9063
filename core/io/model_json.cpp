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
  w.end_object();
  return w.take();
}

}  // namespace stepcalc
