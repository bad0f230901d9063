// SPDX-License-Identifier: Apache-2.0
// HF config -> ModelSpec (rules per model family in docs/MEASURED-MODE.md, "Models").
#include "io/model_spec_config.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

namespace stepcalc {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

constexpr double kMaxWidth = 1e7;  // any width, rank or count read here

/// Lookups over `text_config` merged over the top level, never failing.
struct Fields {
  object top, text;
  bool has_text = false;
  bool find(std::string_view key, element* out) const {
    if (has_text && text.at_key(key).get(*out) == simdjson::SUCCESS && !out->is_null()) return true;
    return top.at_key(key).get(*out) == simdjson::SUCCESS && !out->is_null();
  }
  /// A non-negative whole number, or `fallback` when absent, null, not a number or wild.
  int64_t integer(std::string_view key, int64_t fallback = 0, double max = kMaxWidth) const {
    element e;
    double v = 0;
    if (!find(key, &e) || e.get_double().get(v) != simdjson::SUCCESS) return fallback;
    if (!std::isfinite(v) || v < 0 || v > max) return fallback;
    return static_cast<int64_t>(v);
  }
  std::string text_of(std::string_view key) const {
    element e;
    std::string_view s;
    if (!find(key, &e) || e.get_string().get(s) != simdjson::SUCCESS) return "";
    return std::string(s.substr(0, 64));
  }
  bool flag(std::string_view key, bool fallback) const {
    element e;
    bool b = false;
    if (!find(key, &e) || e.get_bool().get(b) != simdjson::SUCCESS) return fallback;
    return b;
  }
  bool has(std::string_view key) const {
    element e;
    return find(key, &e);
  }
};

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

/// Which weights a quantised checkpoint leaves in 16 bits (compressed-tensors `ignore`,
/// fbgemm/fp8/mxfp4 `modules_to_not_convert`, `ignored_layers`, ModelOpt
/// `exclude_modules`): by module name. Names of what stays 16-bit anyway (router gates,
/// LM head, embeddings, a vision tower, the norms: Qwen3's FP8 checkpoints list every
/// `post_attention_layernorm`, which is no attention weight) change nothing.
void read_ignored_modules(object q, QuantSpec* quant) {
  for (const char* key : {"ignore", "modules_to_not_convert", "ignored_layers", "exclude_modules"}) {
    array list;
    if (q.at_key(key).get(list) != simdjson::SUCCESS) continue;
    for (element item : list) {
      std::string_view name;
      if (item.get_string().get(name) != simdjson::SUCCESS) continue;
      while (!name.empty() && (name.back() == '*' || name.back() == '.')) name.remove_suffix(1);
      if (contains(name, "vision") || contains(name, "visual") || contains(name, "mm_projector") ||
          contains(name, "lm_head") || contains(name, "embed") || contains(name, "router") ||
          contains(name, "e_score") || contains(name, "norm") ||
          (name.size() >= 4 && name.substr(name.size() - 4) == "gate"))
        continue;
      if (contains(name, "self_attn") || contains(name, "attention") || contains(name, "attn"))
        quant->attention = false;
      else if (contains(name, "shared_expert"))
        quant->mlp = false;
      else if (contains(name, "experts"))
        quant->experts = false;
      else if (contains(name, "mlp"))
        quant->mlp = false;
    }
  }
}

/// The weight format a compressed-tensors config stores: 8-bit floats (fp8, or
/// fp8_block with a block strategy), 4-bit floats in groups of 16 (nvfp4) or 32
/// (mxfp4), 4-bit integers (int4, with its group size); kBf16 when none of these.
WeightFormat compressed_tensors_format(object q, int64_t* group_size) {
  object groups;
  if (q.at_key("config_groups").get(groups) != simdjson::SUCCESS) return WeightFormat::kBf16;
  for (auto group : groups) {
    element weights;
    int64_t bits = 0, group_of = 0;
    std::string_view type, strategy;
    if (group.value.at_key("weights").get(weights) != simdjson::SUCCESS) continue;
    if (weights.at_key("num_bits").get(bits) != simdjson::SUCCESS) continue;
    if (weights.at_key("type").get(type) != simdjson::SUCCESS) type = "int";
    if (weights.at_key("group_size").get(group_of) != simdjson::SUCCESS) group_of = 0;
    if (weights.at_key("strategy").get(strategy) != simdjson::SUCCESS) strategy = "";
    if (bits == 8 && type == "float")
      return strategy == "block" || weights.at_key("block_structure").get_array().error() == simdjson::SUCCESS
                 ? WeightFormat::kFp8Block
                 : WeightFormat::kFp8;
    if (bits == 4 && type == "float") return group_of == 32 ? WeightFormat::kMxfp4 : WeightFormat::kNvfp4;
    if (bits == 4 && type == "int") {
      *group_size = group_of > 0 && group_of <= 4096 ? group_of : 0;
      return WeightFormat::kInt4;
    }
  }
  return WeightFormat::kBf16;
}

/// ModelOpt's quant_algo: FP8 (per-tensor), FP8_PB_WO (block-scaled FP8), NVFP4.
WeightFormat modelopt_format(std::string_view algo) {
  if (algo == "NVFP4" || contains(algo, "NVFP4")) return WeightFormat::kNvfp4;
  if (contains(algo, "FP8_PB") || contains(algo, "FP8_BLOCK")) return WeightFormat::kFp8Block;
  if (contains(algo, "FP8")) return WeightFormat::kFp8;
  return WeightFormat::kBf16;
}

void read_quantization(const Fields& f, ModelSpec* s) {
  element e;
  object q;
  if (!f.find("quantization_config", &e) || e.get_object().get(q) != simdjson::SUCCESS) return;
  std::string_view method;
  if (q.at_key("quant_method").get(method) != simdjson::SUCCESS) return;
  QuantSpec& quant = s->quant;
  quant.method = std::string(method.substr(0, 64));
  // ModelOpt's hf_quant_config.json nests its fields under "quantization"; given as a
  // quantization_config as is, read them from there.
  object nested;
  if ((method == "modelopt" || method == "modelopt_fp4") && q.at_key("quant_algo").error() != simdjson::SUCCESS &&
      q.at_key("quantization").get(nested) == simdjson::SUCCESS)
    q = nested;
  std::string_view algo;
  WeightFormat format = WeightFormat::kBf16;
  if (method == "fp8" || method == "fbgemm_fp8")
    format = q.at_key("weight_block_size").error() == simdjson::SUCCESS ? WeightFormat::kFp8Block : WeightFormat::kFp8;
  else if (method == "mxfp4")
    format = WeightFormat::kMxfp4;
  else if (method == "modelopt" || method == "modelopt_fp4")
    format = q.at_key("quant_algo").get(algo) == simdjson::SUCCESS ? modelopt_format(algo) : WeightFormat::kBf16;
  else if (method == "compressed-tensors")
    format = compressed_tensors_format(q, &quant.group_size);
  // An FP8 KV cache the checkpoint carries scales for: ModelOpt's kv_cache_quant_algo
  // (hf_quant_config.json) or an 8-bit float kv_cache_scheme (config.json).
  std::string_view kv_algo, kv_type;
  object kv_scheme;
  int64_t kv_bits = 0;
  if (q.at_key("kv_cache_quant_algo").get(kv_algo) == simdjson::SUCCESS && contains(kv_algo, "FP8"))
    quant.kv_fp8 = true;
  if (q.at_key("kv_cache_scheme").get(kv_scheme) == simdjson::SUCCESS &&
      kv_scheme.at_key("num_bits").get(kv_bits) == simdjson::SUCCESS && kv_bits == 8 &&
      kv_scheme.at_key("type").get(kv_type) == simdjson::SUCCESS && kv_type == "float")
    quant.kv_fp8 = true;
  if (format == WeightFormat::kBf16) {
    s->notes.push_back({"quantization_not_priced",
                        "Quantization '" + quant.method + "' is not measured; the weights are priced as BF16."});
    return;
  }
  quant.format = format;
  quant.attention = quant.mlp = quant.experts = true;
  // gpt-oss's MXFP4 checkpoints quantise the experts only (attention, router and
  // embeddings are named as not converted); other methods name what they leave out.
  read_ignored_modules(q, &quant);
}

/// MoE layers per family: DeepSeek/GLM (`first_k_dense_replace`, `moe_layer_freq`:
/// layer i >= k with i % freq == 0), Qwen-MoE (`decoder_sparse_step`, `mlp_only_layers`)
/// and Llama-4 (`interleave_moe_layer_step`: (i + 1) % step == 0); otherwise every layer.
int64_t count_moe_layers(const Fields& f, int64_t layers) {
  const int64_t first_dense = f.integer("first_k_dense_replace");
  const int64_t freq = f.integer("moe_layer_freq");
  const int64_t step =
      std::max<int64_t>(1, f.integer("interleave_moe_layer_step", f.integer("decoder_sparse_step", 1)));
  // One flag per layer (layers is bounded by the input limits): linear in the list's
  // length, however long, where a search per layer was quadratic.
  std::vector<bool> dense_only(static_cast<size_t>(std::max<int64_t>(layers, 0)), false);
  element e;
  array list;
  if (f.find("mlp_only_layers", &e) && e.get_array().get(list) == simdjson::SUCCESS)
    for (element item : list) {
      int64_t i = 0;
      if (item.get_int64().get(i) == simdjson::SUCCESS && i >= 0 && i < layers)
        dense_only[static_cast<size_t>(i)] = true;
    }
  int64_t count = 0;
  for (int64_t i = 0; i < layers; ++i) {
    if (i < first_dense || dense_only[static_cast<size_t>(i)]) continue;
    if (freq > 0 ? i % freq == 0 : (i + 1) % step == 0) ++count;
  }
  return count;
}

void read_moe(const Fields& f, ModelSpec* s) {
  MoeSpec& m = s->moe;
  for (const char* key : {"num_local_experts", "n_routed_experts", "num_experts"})
    if ((m.num_experts = f.integer(key)) > 0) break;
  if (m.num_experts == 0) return;
  m.top_k = std::min(m.num_experts,
                     f.integer("num_experts_per_tok", f.integer("num_experts_per_token", f.integer("moe_topk"))));
  if (m.top_k == 0) {
    s->notes.push_back({"moe_without_topk", "The config names experts but no num_experts_per_tok; priced dense."});
    m = MoeSpec{};
    return;
  }
  m.expert_intermediate = f.integer("moe_intermediate_size", s->intermediate_size);
  m.dense_intermediate = f.integer("intermediate_size_mlp", s->intermediate_size);
  if (const int64_t shared = f.integer("n_shared_experts", f.integer("num_shared_experts")); shared > 0) {
    m.shared_experts = shared;
    m.shared_intermediate = shared * m.expert_intermediate;
  } else if (const int64_t width = f.integer("shared_expert_intermediate_size"); width > 0) {
    m.shared_experts = 1;
    m.shared_intermediate = width;
  } else if (s->model_type.rfind("llama4", 0) == 0) {
    m.shared_experts = 1;  // Llama-4: one shared expert of intermediate_size beside the routed ones
    m.shared_intermediate = s->intermediate_size;
  }
  m.num_moe_layers = count_moe_layers(f, s->num_layers);
}

void read_mla(const Fields& f, ModelSpec* s) {
  MlaSpec& m = s->mla;
  m.kv_lora_rank = f.integer("kv_lora_rank");
  if (m.kv_lora_rank == 0) return;
  m.q_lora_rank = f.integer("q_lora_rank");
  m.qk_nope_head_dim = f.integer("qk_nope_head_dim", s->head_dim);
  m.qk_rope_head_dim = f.integer("qk_rope_head_dim", 64);
  m.v_head_dim = f.integer("v_head_dim", s->head_dim);
  // DeepSeek sparse attention as DeepSeek-V3.2 runs it (its defaults where a key is absent), the
  // one shape the DSA tables measure. Other models with an indexer (GLM-5's GlmMoeDsa) stay
  // priced as dense MLA, with the note sparse_attention_approximated.
  if (s->model_type == "deepseek_v32") {
    m.index_topk = f.integer("index_topk", 2048);
    m.index_head_dim = f.integer("index_head_dim", 128);
    m.index_key_bytes = m.index_head_dim + m.index_head_dim / 128 * 4;  // vLLM's indexer cache entry
  }
}

/// Gated DeltaNet layers (Qwen3-Next) or Kimi delta attention's: how many (model_config.cpp counted and checked them:
/// layer_types' "linear_attention", else all but every full_attention_interval-th) and their widths.
void read_linear(const Fields& f, int64_t layers, ModelSpec* s) {
  if (layers <= 0) return;
  LinearAttentionSpec& l = s->linear;
  l.num_layers = layers;
  element e;
  Fields kda;
  if (f.find("linear_attn_config", &e) && e.get_object().get(kda.top) == simdjson::SUCCESS) {
    // Kimi delta attention (checked by model_config.cpp): q, k and v of num_heads x head_dim each.
    l.kda = true;
    l.num_k_heads = l.num_v_heads = kda.integer("num_heads");
    l.head_k_dim = l.head_v_dim = kda.integer("head_dim");
    l.conv_kernel = kda.integer("short_conv_kernel_size");
    return;
  }
  l.num_k_heads = f.integer("linear_num_key_heads");
  l.num_v_heads = f.integer("linear_num_value_heads");
  l.head_k_dim = f.integer("linear_key_head_dim");
  l.head_v_dim = f.integer("linear_value_head_dim");
  l.conv_kernel = f.integer("linear_conv_kernel_dim");
}

void note_unpriced(const Fields& f, ModelSpec* s) {
  const bool window_on = f.flag("use_sliding_window", true);
  if (const int64_t window = f.integer("sliding_window"); window > 0 && window_on) {
    s->sliding_window = window;
    int64_t sliding = s->num_layers;  // Mistral-style: every layer
    element types;
    simdjson::dom::array list;
    if (f.find("layer_types", &types) && types.get_array().get(list) == simdjson::SUCCESS) {
      sliding = 0;
      for (element t : list) {
        std::string_view v;
        sliding += t.get_string().get(v) == simdjson::SUCCESS && v == "sliding_attention";
      }
    } else if (const int64_t pattern = f.integer("sliding_window_pattern"); pattern > 1) {
      sliding = s->num_layers - s->num_layers / pattern;  // every pattern-th layer attends to all
    }
    s->sliding_layers = std::min(sliding, s->num_layers);
    s->notes.push_back({"sliding_window_approximated",
                        "The sliding attention window (" + std::to_string(window) + " tokens, " +
                            std::to_string(s->sliding_layers) +
                            " layers) is priced as full attention in blis-v2 and corrected; measured cuts each "
                            "request's context to the window (a prefill chunk's own tokens still attend to each "
                            "other). Its KV cache is sized as vLLM's hybrid allocator holds it."});
  }
  if ((s->attention_chunk = f.integer("attention_chunk_size")) > 0)
    s->notes.push_back(
        {"chunked_attention_approximated",
         "Chunked local attention (" + std::to_string(s->attention_chunk) + " tokens) is priced as full attention."});
  if (s->activation != "silu" && s->activation.rfind("gelu", 0) != 0)
    s->notes.push_back({"activation_approximated",
                        "The activation '" + s->activation + "' is priced as SiLU-and-mul (same bytes per token)."});
  if (s->has_vision)
    s->notes.push_back({"vision_not_priced", "The vision tower is not priced: a step prices text tokens only."});
  // DeepSeek-V3.2's sparse attention is priced from the DSA tables (or refused where none exist).
  if ((f.has("index_topk") || f.has("index_n_heads")) && !s->is_sparse_mla())
    s->notes.push_back({"sparse_attention_approximated",
                        "DeepSeek sparse attention (the indexer and its top-k) is priced as dense MLA attention."});
  if (f.integer("num_nextn_predict_layers") > 0)
    s->notes.push_back(
        {"mtp_not_priced", "The multi-token-prediction layers are not priced (no speculative decoding)."});
}

}  // namespace

ModelSpec model_spec_from_shape(const ModelShape& shape) {
  ModelSpec s;
  s.num_layers = shape.num_layers;
  s.hidden_size = shape.hidden_size;
  s.num_heads = shape.num_heads;
  s.num_kv_heads = shape.num_kv_heads;
  s.head_dim = shape.num_heads > 0 ? shape.hidden_size / shape.num_heads : 0;
  s.intermediate_size = shape.intermediate_size;
  s.vocab_size = shape.vocab_size;
  s.dtype = shape.dtype;
  if (shape.bytes_per_param > 0 && shape.bytes_per_param <= 1) {
    s.quant.method = "bytes_per_param";
    s.quant.format = WeightFormat::kFp8;
    s.quant.attention = s.quant.mlp = s.quant.experts = true;
    if (shape.dtype != "fp8")
      s.notes.push_back({"one_byte_weights", "One-byte weights (" +
                                                 (shape.dtype.empty() ? "bytes_per_param 1" : shape.dtype) +
                                                 ") are priced with the FP8 GEMM tables."});
  }
  return s;
}

/// The context as vLLM derives its default max_model_len: the first length key the
/// config has, times rope_scaling's factor unless the scaling keeps the length (su,
/// longrope, llama3, default); yarn starts from original_max_position_embeddings.
void read_context(const Fields& f, ModelSpec* s) {
  int64_t length = 0;
  for (const char* key : {"max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "max_sequence_length",
                          "model_max_length"})
    if ((length = f.integer(key, 0, 1e9)) > 0) break;  // Llama-4 Scout: 10,485,760
  element e;
  object rope;
  if (length > 0 && f.find("rope_scaling", &e) && e.get_object().get(rope) == simdjson::SUCCESS) {
    std::string_view type;
    if (rope["rope_type"].get_string().get(type) != simdjson::SUCCESS &&
        rope["type"].get_string().get(type) != simdjson::SUCCESS)
      type = "";
    double factor = 0, original = 0;
    if (rope["factor"].get_double().get(factor) == simdjson::SUCCESS && std::isfinite(factor) && factor > 0 &&
        type != "su" && type != "longrope" && type != "llama3" && type != "default" && type != "mrope") {
      if (type == "yarn" && rope["original_max_position_embeddings"].get_double().get(original) == simdjson::SUCCESS &&
          original > 0 && original <= 1e9)
        length = static_cast<int64_t>(original);
      length = static_cast<int64_t>(std::min(static_cast<double>(length) * factor, 1e9));
    }
  }
  s->max_model_len = length;
}

const SpecKeys& model_spec_keys() {
  // Keep in step with the readers above (tests/wasm/spec-keys.test.mjs checks every key
  // this file reads is here, and that shipped configs reduced to these keys price alike).
  static const SpecKeys kKeys = {
      {"model_type",
       "head_dim",
       "tie_word_embeddings",
       "hidden_act",
       "hidden_activation",
       "use_qk_norm",
       "qk_norm_type",
       "quantization_config",
       "num_local_experts",
       "n_routed_experts",
       "num_experts",
       "num_experts_per_tok",
       "num_experts_per_token",
       "moe_topk",
       "moe_intermediate_size",
       "intermediate_size_mlp",
       "n_shared_experts",
       "num_shared_experts",
       "shared_expert_intermediate_size",
       "first_k_dense_replace",
       "moe_layer_freq",
       "interleave_moe_layer_step",
       "decoder_sparse_step",
       "mlp_only_layers",
       "kv_lora_rank",
       "q_lora_rank",
       "qk_nope_head_dim",
       "qk_rope_head_dim",
       "v_head_dim",
       "max_position_embeddings",
       "n_positions",
       "max_seq_len",
       "seq_length",
       "max_sequence_length",
       "model_max_length",
       "rope_scaling",
       "use_sliding_window",
       "sliding_window",
       "layer_types",
       "sliding_window_pattern",
       "attention_chunk_size",
       "index_topk",
       "index_n_heads",
       "index_head_dim",
       "num_nextn_predict_layers",
       "attn_output_gate",
       "full_attention_interval",
       "linear_num_key_heads",
       "linear_num_value_heads",
       "linear_key_head_dim",
       "linear_value_head_dim",
       "linear_conv_kernel_dim",
       "linear_attn_config"},
      {"architectures", "vision_config"},
  };
  return kKeys;
}

ModelSpec model_spec_from_config(object config, const ModelShape& shape) {
  Fields f;
  f.top = config;
  element text;
  if (config.at_key("text_config").get(text) == simdjson::SUCCESS && text.is_object()) {
    f.text = text.get_object().value_unsafe();
    f.has_text = true;
  }
  ModelSpec s = model_spec_from_shape(shape);
  s.model_type = f.text_of("model_type");
  element arch;
  std::string_view first;
  if (config.at_key("architectures").get(arch) == simdjson::SUCCESS && arch.is_array() &&
      arch.at(0).get_string().get(first) == simdjson::SUCCESS)
    s.architecture = std::string(first.substr(0, 64));
  if (const int64_t head_dim = f.integer("head_dim"); head_dim > 0) s.head_dim = head_dim;
  s.tie_word_embeddings = f.flag("tie_word_embeddings", false);
  s.activation = f.text_of("hidden_act");
  if (s.activation.empty()) s.activation = f.text_of("hidden_activation");  // Gemma's name for it
  if (s.activation.empty()) s.activation = "silu";
  s.qk_norm =
      f.flag("use_qk_norm", s.model_type == "qwen3" || s.model_type == "qwen3_moe" || s.model_type == "qwen3_next");
  s.qk_norm_all_heads = s.qk_norm && f.text_of("qk_norm_type") == "per_layer";
  // Qwen3-Next's full-attention layers are gated (its config names no key for it; Qwen3.5's does).
  s.attn_output_gate = f.flag("attn_output_gate", s.model_type == "qwen3_next");
  s.has_vision = config.at_key("vision_config").error() == simdjson::SUCCESS;
  read_quantization(f, &s);
  read_moe(f, &s);
  read_mla(f, &s);
  read_linear(f, shape.linear_layers, &s);
  read_context(f, &s);
  note_unpriced(f, &s);
  return s;
}

}  // namespace stepcalc
