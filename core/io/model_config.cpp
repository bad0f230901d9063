// SPDX-License-Identifier: Apache-2.0
#include "io/model_config.h"

#include <algorithm>
#include <cctype>

#include "base/input_limits.h"
#include "io/model_spec_config.h"
#include "json/json_writer.h"
#include "kernels/embedded_data.h"

namespace stepcalc {
namespace {

using json::element;
using json::object;
using json::Path;

/// Positions in config_notes().
enum ConfigNoteIndex { kMoe, kMla, kSlidingWindow, kHeadDim };

/// Field lookup over a config with `text_config` merged over the top level. `where`
/// receives the path the value was found at.
struct ConfigView {
  const Path& path;
  Path text_path;
  object top;
  object text;
  bool has_text = false;
  explicit ConfigView(const Path& p) : path(p), text_path(p.key("text_config")) {}
  bool find(std::string_view key, element* out, const Path** base) const {
    if (has_text && text.at_key(key).get(*out) == simdjson::SUCCESS) {
      *base = &text_path;
      return true;
    }
    if (top.at_key(key).get(*out) == simdjson::SUCCESS) {
      *base = &path;
      return true;
    }
    return false;
  }
  /// The path of `key` where it was found (or at the top level when absent).
  std::string where(std::string_view key) const {
    element unused;
    const Path* base = &path;
    find(key, &unused, &base);
    return base->key(key).str();
  }
};

/// First non-zero of `keys` (integers, truncated); 0 when all are absent, null or 0.
/// `zero_at` (if given) receives the path of the first key that was present as 0.
Expected<int64_t> first_nonzero(const ConfigView& c, std::initializer_list<const char*> keys, int64_t max,
                                std::string* zero_at = nullptr) {
  for (const char* key : keys) {
    element e;
    const Path* base = nullptr;
    if (!c.find(key, &e, &base) || e.is_null()) continue;
    auto v = json::read_int(e, base->key(key), 0, max, true);
    if (!v) return v.error();
    if (v.value() != 0) return v.value();
    if (zero_at != nullptr && zero_at->empty()) *zero_at = base->key(key).str();
  }
  return int64_t{0};
}

/// A required model dimension that came out 0: absent is missing_field, given as 0
/// (or a fraction below 1) is invalid_value at the path where it was given.
Error zero_dimension(const Path& path, const char* key, const std::string& zero_at) {
  if (zero_at.empty()) return json::missing_field(path, key, "The model needs " + std::string(key) + " > 0.");
  return make_error("invalid_value", zero_at, zero_at + " must be at least 1.");
}

std::string known_dtype_list() {
  std::string out;
  for (const DtypeBytes& d : known_dtypes()) out += (out.empty() ? "" : ", ") + std::string(d.name);
  return out;
}

/// The expert count and top-k of a MoE config, checked where the config gives them: a
/// whole number in [0, kMaxExperts] each (not a string, fraction or negative), and top-k
/// at most the experts. An invalid one is refused, never priced as a dense model.
Expected<bool> check_moe(const ConfigView& c) {
  auto experts = first_nonzero(c, {"num_local_experts", "n_routed_experts", "num_experts"}, limits::kMaxExperts);
  if (!experts) return experts.error();
  auto top_k = first_nonzero(c, {"num_experts_per_tok", "moe_topk"}, limits::kMaxExperts);
  if (!top_k) return top_k.error();
  if (experts.value() > 0 && top_k.value() > experts.value()) {
    element unused;
    const Path* base = nullptr;
    const std::string where =
        c.where(c.find("num_experts_per_tok", &unused, &base) ? "num_experts_per_tok" : "moe_topk");
    return make_error("invalid_value", where,
                      where + " (" + std::to_string(top_k.value()) + ") must be at most the number of experts (" +
                          std::to_string(experts.value()) + "): each token picks that many different experts.");
  }
  return true;
}

/// bytes_per_param as given, or from torch_dtype / dtype.
Expected<bool> read_bytes_per_param(const ConfigView& c, ModelShape* m) {
  element e;
  const Path* base = nullptr;
  if (c.find("bytes_per_param", &e, &base)) {
    const Path where = base->key("bytes_per_param");
    auto bpp = json::read_number(e, where);
    if (!bpp) return bpp.error();
    if (!(bpp.value() > 0)) return make_error("invalid_value", where.str(), where.str() + " must be positive.");
    if (bpp.value() > limits::kMaxBytesPerParam)
      return make_error(
          "out_of_range", where.str(),
          where.str() + " exceeds the limit of " + format_double(limits::kMaxBytesPerParam) + " bytes per parameter.");
    m->bytes_per_param = bpp.value();
    return true;
  }
  const char* key = "torch_dtype";
  if (!c.find(key, &e, &base)) {
    key = "dtype";
    if (!c.find(key, &e, &base)) {
      // Hub configs without either exist (gpt-oss, MiniMax-M2.5): transformers then reads the
      // model as float32, which vLLM's default --dtype auto downcasts to the platform's first
      // supported dtype, bfloat16 on every GPU here (vLLM pull request 18751, May 2025; before
      // it, float16: the same two bytes).
      m->dtype = "bfloat16";
      m->bytes_per_param = 2;
      m->notes.push_back({"dtype_assumed",
                          "The config names no torch_dtype (or dtype): priced as vLLM's --dtype auto loads a "
                          "float32 config, in bfloat16 (2 bytes per parameter). Give torch_dtype or "
                          "bytes_per_param if the checkpoint is stored otherwise."});
      return true;
    }
  }
  const Path where = base->key(key);
  auto dtype = json::read_string(e, where);
  if (!dtype) return dtype.error();
  m->dtype = dtype.value();
  m->bytes_per_param = bytes_per_param_of_dtype(m->dtype);
  if (m->bytes_per_param == 0)
    return make_error("invalid_value", where.str(),
                      "Unknown dtype '" + utf8_prefix(m->dtype, limits::kMaxEchoBytes) +
                          "' (known: " + known_dtype_list() + "); set bytes_per_param.");
  return true;
}

/// Notes on features the step model ignores: said, not silently dropped.
Expected<bool> add_notes(const ConfigView& c, ModelShape* m) {
  auto has = [&](const char* key) {
    element v;
    const Path* base = nullptr;
    return c.find(key, &v, &base) && !v.is_null() && !(v.is_bool() && !v.get_bool().value_unsafe());
  };
  const std::vector<ConfigNoteInfo>& info = config_notes();
  auto has_any = [&](const ConfigNoteInfo& note) {
    for (const char* key : note.keys)
      if (has(key)) return true;
    return false;
  };
  auto has_all = [&](const ConfigNoteInfo& note) {
    for (const char* key : note.keys)
      if (!has(key)) return false;
    return true;
  };
  if (has_any(info[kMoe]))
    m->notes.push_back({info[kMoe].code,
                        "This is a mixture-of-experts model; the step model prices it as a dense model "
                        "with intermediate_size " +
                            std::to_string(m->intermediate_size) + "."});
  if (has_any(info[kMla]))
    m->notes.push_back({info[kMla].code,
                        "Multi-head latent attention (kv_lora_rank) is ignored; KV memory is priced as "
                        "standard attention."});
  if (has_all(info[kSlidingWindow]))
    m->notes.push_back({info[kSlidingWindow].code, "The sliding attention window is ignored."});
  element e;
  const Path* base = nullptr;
  if (c.find(info[kHeadDim].keys[0], &e, &base) && json::is_number(e)) {
    // Read as a bounded integer: a wild value (1e300) must not reach an int64 cast.
    auto head_dim = json::read_int(e, base->key("head_dim"), 0, limits::kMaxHidden, true);
    if (!head_dim) return head_dim.error();
    const int64_t declared = head_dim.value();
    if (declared != m->hidden_size / m->num_heads)
      m->notes.push_back({info[kHeadDim].code,
                          "The config's head_dim " + std::to_string(declared) + " differs from hidden_size / heads = " +
                              std::to_string(m->hidden_size / m->num_heads) + "; the step model uses the latter."});
  }
  return true;
}

std::string normalise_preset(std::string name) {
  const size_t slash = name.rfind('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name;
}

}  // namespace

const std::vector<ConfigNoteInfo>& config_notes() {
  static const std::vector<ConfigNoteInfo> kNotes = {
      {"moe_ignored", {"num_local_experts", "n_routed_experts", "num_experts"}},
      {"mla_ignored", {"kv_lora_rank"}},
      {"sliding_window_ignored", {"sliding_window", "use_sliding_window"}},
      {"head_dim_differs", {"head_dim"}},
  };
  return kNotes;
}

const std::vector<const char*>& model_shape_fields() {
  static const std::vector<const char*> kFields = {"num_hidden_layers",   "hidden_size",       "num_attention_heads",
                                                   "num_key_value_heads", "intermediate_size", "vocab_size",
                                                   "bytes_per_param"};
  return kFields;
}

/// Each of `keys` in `c` a dimension of at least 1 (a fraction truncated): missing_field when
/// absent, invalid_value at 0, the reader's own error otherwise.
Expected<bool> check_positive(const ConfigView& c, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    std::string zero_at;
    auto v = first_nonzero(c, {key}, limits::kMaxHidden, &zero_at);
    if (!v) return v.error();
    if (v.value() == 0) return zero_dimension(c.path, key, zero_at);
  }
  return true;
}

/// Kimi delta attention (Kimi-Linear's `linear_attn_config`): `kda_layers` (1-based layer
/// numbers, counted, not read one by one: at least one, and at least one layer left to full
/// attention) and
/// `num_heads`, `head_dim`, `short_conv_kernel_size` (read as the model's own dimensions: whole,
/// a fraction truncated, at least 1). Returns the KDA layers.
Expected<int64_t> check_kda(element config, const Path& at, int64_t num_layers) {
  ConfigView kda(at);
  if (config.get_object().get(kda.top) != simdjson::SUCCESS) return json::type_error(at, config, "an object");
  if (auto ok = check_positive(kda, {"num_heads", "head_dim", "short_conv_kernel_size"}); !ok) return ok.error();
  element e;
  simdjson::dom::array list;
  if (kda.top.at_key("kda_layers").get(e) != simdjson::SUCCESS) return json::missing_field(at, "kda_layers");
  if (e.get_array().get(list) != simdjson::SUCCESS) return json::type_error(at.key("kda_layers"), e, "an array");
  const int64_t count = static_cast<int64_t>(list.size());
  if (count == 0 || count >= num_layers)
    return make_error("unsupported", at.key("kda_layers").str(),
                      "Kimi delta attention needs KDA layers and a full-attention layer.");
  return count;
}

/// Linear-attention layers the core prices are gated DeltaNet's (Qwen3-Next: layer_types
/// "linear_attention" or every layer but each full_attention_interval-th, with the
/// linear_* widths, checked here) and Kimi delta attention's (`linear_attn_config`, check_kda).
/// Other linear-attention or state-space layers (MiniMax's lightning attention, Mamba) have no
/// measured tables: refused, naming the key. Returns the linear-attention layers (0: none).
Expected<int64_t> check_attention_kind(const ConfigView& c, int64_t num_layers) {
  element e;
  const Path* base = nullptr;
  std::string_view found;
  int64_t linear = -1;  // gated DeltaNet layers listed in layer_types; -1: no such list
  if (c.find("linear_attn_config", &e, &base) && !e.is_null())
    return check_kda(e, base->key("linear_attn_config"), num_layers);
  const auto lists = [&](const char* key, auto linear_kind) {
    simdjson::dom::array list;
    if (!found.empty() || !c.find(key, &e, &base) || e.get_array().get(list) != simdjson::SUCCESS) return;
    for (element t : list)
      if (linear_kind(t)) {
        found = key;
        return;
      }
  };
  lists("layer_types", [&](element t) {
    std::string_view v;
    if (t.get_string().get(v) != simdjson::SUCCESS || v.find("linear") == std::string_view::npos) return false;
    linear = std::max<int64_t>(linear, 0) + (v == "linear_attention");
    return v != "linear_attention";
  });
  lists("layers_block_type", [](element t) {
    std::string_view v;
    return t.get_string().get(v) == simdjson::SUCCESS && (v == "mamba" || v.find("linear") != std::string_view::npos);
  });
  lists("attn_type_list", [](element t) {  // MiniMax: 0 = lightning (linear) attention, 1 = softmax
    int64_t v = 1;
    return t.get_int64().get(v) == simdjson::SUCCESS && v == 0;
  });
  if (!found.empty())
    return make_error("unsupported", c.where(found),
                      "These linear-attention or state-space layers (" + std::string(found) +
                          ") are not measured: stepcalc prices softmax attention, and gated DeltaNet and Kimi delta "
                          "attention in measured.");
  // A gated DeltaNet model: its widths, whole and positive, and which layers are linear.
  auto interval = first_nonzero(c, {"full_attention_interval"}, limits::kMaxLayers);
  if (!interval) return interval.error();
  if (linear < 0 && interval.value() == 0 && !c.find("linear_num_value_heads", &e, &base)) return int64_t{0};
  const bool listed = linear >= 0;  // layer_types says which layers are linear
  if (auto ok = check_positive(c, {"linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
                                   "linear_value_head_dim", "linear_conv_kernel_dim"});
      !ok)
    return ok.error();
  if (auto ok = check_positive(c, {"full_attention_interval"}); !listed && !ok) return ok.error();
  if (!listed) linear = num_layers - num_layers / interval.value();  // every interval-th layer is full
  if (first_nonzero(c, {"linear_num_value_heads"}, limits::kMaxHidden).value() %
              first_nonzero(c, {"linear_num_key_heads"}, limits::kMaxHidden).value() !=
          0 ||
      linear >= num_layers)
    return make_error("unsupported",
                      c.where(linear < num_layers ? "linear_num_value_heads"
                              : listed            ? "layer_types"
                                                  : "full_attention_interval"),
                      "A gated DeltaNet model needs value heads in equal groups per key head, and a full-attention "
                      "layer (its KV cache).");
  return linear;
}

Expected<ModelShape> model_from_config(object top, const Path& path) {
  ConfigView c(path);
  c.top = top;
  element text;
  if (top.at_key("text_config").get(text) == simdjson::SUCCESS && text.is_object()) {
    c.text = text.get_object().value_unsafe();
    c.has_text = true;
  }
  ModelShape m;
  std::string layers_zero, hidden_zero, heads_zero;
  auto layers = first_nonzero(c, {"num_hidden_layers"}, limits::kMaxLayers, &layers_zero);
  auto hidden = first_nonzero(c, {"hidden_size"}, limits::kMaxHidden, &hidden_zero);
  auto heads = first_nonzero(c, {"num_attention_heads"}, limits::kMaxHeads, &heads_zero);
  auto kv = first_nonzero(c, {"num_key_value_heads", "num_kv_heads", "multi_query_group_num"}, limits::kMaxHeads);
  auto ffn = first_nonzero(c, {"intermediate_size", "ffn_hidden_size"}, limits::kMaxIntermediate);
  auto vocab = first_nonzero(c, {"vocab_size"}, limits::kMaxVocab);
  for (const Expected<int64_t>* v : {&layers, &hidden, &heads, &kv, &ffn, &vocab})
    if (!*v) return v->error();
  m.num_layers = layers.value();
  m.hidden_size = hidden.value();
  m.num_heads = heads.value();
  if (m.num_layers == 0) return zero_dimension(path, "num_hidden_layers", layers_zero);
  if (m.hidden_size == 0) return zero_dimension(path, "hidden_size", hidden_zero);
  if (m.num_heads == 0) return zero_dimension(path, "num_attention_heads", heads_zero);
  if (m.hidden_size < m.num_heads) {
    // head_dim = hidden_size / heads would be 0: every attention term would vanish.
    const std::string where = c.where("hidden_size");
    return make_error("invalid_value", where,
                      where + " (" + std::to_string(m.hidden_size) + ") must be at least num_attention_heads (" +
                          std::to_string(m.num_heads) + "): the head dimension would be 0.");
  }
  m.num_kv_heads = kv.value() != 0 ? kv.value() : m.num_heads;
  if (m.num_kv_heads > m.num_heads || m.num_heads % m.num_kv_heads != 0) {
    // Each KV head serves an equal group of query heads: HuggingFace models and vLLM
    // both split the heads so, and refuse a shape that cannot be split.
    const char* given = "num_key_value_heads";
    for (const char* key : {"num_key_value_heads", "num_kv_heads", "multi_query_group_num"}) {
      element e;
      const Path* base = nullptr;
      if (c.find(key, &e, &base) && !e.is_null()) {
        given = key;
        break;
      }
    }
    const std::string where = c.where(given);
    return make_error("invalid_value", where,
                      where + " (" + std::to_string(m.num_kv_heads) + ") must divide num_attention_heads (" +
                          std::to_string(m.num_heads) + "): each KV head serves an equal group of query heads.");
  }
  m.intermediate_size = ffn.value() != 0 ? ffn.value() : 4 * m.hidden_size;
  m.vocab_size = vocab.value();
  auto bytes = read_bytes_per_param(c, &m);
  if (!bytes) return bytes.error();
  auto notes = add_notes(c, &m);
  if (!notes) return notes.error();
  auto moe = check_moe(c);
  if (!moe) return moe.error();
  auto kind = check_attention_kind(c, m.num_layers);
  if (!kind) return kind.error();
  m.linear_layers = kind.value();
  for (const char* key : {"index_topk", "index_n_heads", "index_head_dim"})  // DeepSeek sparse attention
    if (auto v = first_nonzero(c, {key}, limits::kMaxHidden); !v) return v.error();
  m.spec = model_spec_from_config(top, m);
  for (const Warning& note : m.notes)  // the measured mode's operators are priced at that dtype too
    if (note.code == "dtype_assumed") m.spec.notes.push_back(note);
  m.source = "config";
  return m;
}

namespace {

/// Parses `text` (a config document) and reads its root with `read`; a document-level
/// error is reported at `path`.
template <typename Read>
Expected<ModelShape> parse_config_text(std::string_view text, const std::string& path, Read read) {
  simdjson::dom::parser parser;
  auto doc = json::parse_document(parser, text, limits::kMaxConfigDepth);
  if (!doc) {
    Error e = doc.error();
    e.path = path;
    return e;
  }
  return read(*doc, Path(path));
}

}  // namespace

Expected<ModelShape> parse_model_config(std::string_view text, const std::string& path) {
  return parse_config_text(text, path, [](element doc, const Path& root) -> Expected<ModelShape> {
    if (!doc.is_object()) return json::type_error(root, doc, "a config object");
    return model_from_config(doc.get_object().value_unsafe(), root);
  });
}

Expected<ModelShape> model_from_json(element model, const Path& path) {
  if (model.is_string()) {
    auto name = json::read_string(model, path);
    if (!name) return name.error();
    return model_preset(name.value(), path.str());
  }
  if (model.is_object()) return model_from_config(model.get_object().value_unsafe(), path);
  return json::type_error(path, model, "a preset name or a config object");
}

Expected<ModelShape> parse_model_value(std::string_view text, const std::string& path) {
  return parse_config_text(text, path, model_from_json);
}

const std::vector<DtypeBytes>& known_dtypes() {
  static const std::vector<DtypeBytes> kDtypes = {{"float32", 4}, {"float16", 2}, {"bfloat16", 2}, {"int8", 1},
                                                  {"uint8", 1},   {"fp8", 1},     {"int4", 1},     {"nf4", 1}};
  return kDtypes;
}

double bytes_per_param_of_dtype(std::string_view dtype) {
  for (const DtypeBytes& d : known_dtypes())
    if (dtype == d.name) return d.bytes_per_param;
  return 0;
}

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (size_t i = 0; i < embedded::kModelPresetCount; ++i) names.push_back(embedded::kModelPresets[i].name);
  return names;
}

Expected<ModelShape> model_preset(const std::string& name, const std::string& path) {
  const std::string wanted = normalise_preset(name);
  for (size_t i = 0; i < embedded::kModelPresetCount; ++i) {
    if (wanted != embedded::kModelPresets[i].name) continue;
    auto shape = parse_model_config(embedded::kModelPresets[i].json, path);
    if (!shape) return shape.error();
    ModelShape m = shape.value();
    m.preset = embedded::kModelPresets[i].name;
    m.source = "preset:" + m.preset;
    return m;
  }
  std::string known;
  for (const std::string& n : model_preset_names()) known += (known.empty() ? "" : ", ") + n;
  return make_error("unknown_preset", path,
                    "Unknown model preset '" + utf8_prefix(name, limits::kMaxEchoBytes) + "'; presets: " + known + ".");
}

}  // namespace stepcalc
