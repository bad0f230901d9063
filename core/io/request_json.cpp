// JSON in, with simdjson's DOM (no exceptions). Every error names its JSON path.
#include "io/request_json.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "input_limits.h"
#include "io/json_writer.h"
#include "io/model_spec_config.h"
#include "kernels/embedded_data.h"
#include "simdjson.h"

namespace stepcalc {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}
std::string index_path(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

const char* type_name(element e) {
  switch (e.type()) {
    case element_type::ARRAY:
      return "an array";
    case element_type::OBJECT:
      return "an object";
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE:
      return "a number";
    case element_type::STRING:
      return "a string";
    case element_type::BOOL:
      return "a boolean";
    case element_type::NULL_VALUE:
      return "null";
  }
  return "a value";
}

Error type_error(const std::string& path, element e, const char* wanted) {
  return make_error("type_error", path, path + " must be " + wanted + ", not " + type_name(e) + ".");
}

bool is_number(element e) {
  return e.type() == element_type::INT64 || e.type() == element_type::UINT64 || e.type() == element_type::DOUBLE;
}

/// An integer field in [min, max]. `truncate`: fractions are cut toward zero
/// (model configs, as the reference reads them); otherwise a fraction is an error.
Expected<int64_t> read_int(element e, const std::string& path, int64_t min, int64_t max, bool truncate) {
  if (!is_number(e)) return type_error(path, e, "an integer");
  double as_double = 0;
  int64_t value = 0;
  if (e.type() == element_type::INT64) {
    value = e.get_int64().value_unsafe();
    as_double = static_cast<double>(value);
  } else if (e.type() == element_type::UINT64) {
    as_double = static_cast<double>(e.get_uint64().value_unsafe());
    value = INT64_MAX;
  } else {
    as_double = e.get_double().value_unsafe();
    if (!truncate && as_double != std::trunc(as_double))
      return make_error("not_integer", path, path + " must be a whole number.");
    as_double = std::trunc(as_double);
    value = std::fabs(as_double) < 9.2e18 ? static_cast<int64_t>(as_double) : (as_double < 0 ? INT64_MIN : INT64_MAX);
  }
  if (value < min || as_double < static_cast<double>(min)) {
    if (min == 0) return make_error("invalid_value", path, path + " must not be negative.");
    return make_error("invalid_value", path, path + " must be at least " + std::to_string(min) + ".");
  }
  if (value > max || as_double > static_cast<double>(max))
    return make_error("out_of_range", path, path + " exceeds the limit of " + std::to_string(max) + ".");
  return value;
}

Expected<double> read_number(element e, const std::string& path) {
  if (!is_number(e)) return type_error(path, e, "a number");
  double v = 0;
  if (e.get_double().get(v) != simdjson::SUCCESS) return type_error(path, e, "a number");
  return v;
}

Expected<std::string> read_string(element e, const std::string& path) {
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS) return type_error(path, e, "a string");
  if (s.size() > limits::kMaxStringBytes)
    return make_error("out_of_range", path,
                      path + " is longer than " + std::to_string(limits::kMaxStringBytes) + " bytes.");
  return std::string(s);
}

Error unknown_field(const std::string& path, std::string_view key, const char* known) {
  const std::string shown = utf8_prefix(key, 64);
  return make_error(
      "unknown_field", join(path, shown),
      "Unknown field '" + shown + "'" + (path.empty() ? "" : " in " + path) + "; known fields: " + known + ".");
}

/// The first key that appears twice in one object anywhere inside `e`, as an error
/// naming its path. JSON parsers disagree on which copy wins (simdjson's lookups
/// take the first, JavaScript's JSON.parse the last), so a repeated key would price
/// differently in the CLI and the page: it is refused instead.
Expected<bool> check_unique_keys(element e, const std::string& path) {
  simdjson::dom::array items;
  if (e.get_array().get(items) == simdjson::SUCCESS) {
    size_t i = 0;
    for (element item : items) {
      if (!item.is_array() && !item.is_object()) {
        ++i;
        continue;
      }
      auto ok = check_unique_keys(item, index_path(path, i++));
      if (!ok) return ok;
    }
    return true;
  }
  object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return true;
  std::vector<std::string_view> keys;
  for (auto field : o) {
    keys.push_back(field.key);
    if (field.value.is_array() || field.value.is_object()) {
      auto ok = check_unique_keys(field.value, join(path, field.key));
      if (!ok) return ok;
    }
  }
  std::sort(keys.begin(), keys.end());
  const auto dup = std::adjacent_find(keys.begin(), keys.end());
  if (dup == keys.end()) return true;
  const std::string shown = utf8_prefix(*dup, 64);
  return make_error("parse_error", join(path, shown),
                    "The key '" + shown + "' appears twice in " + (path.empty() ? "the request" : path) +
                        "; each key may appear once.");
}

/// Whether some object in `e` repeats a key: check_unique_keys without building any
/// path, for the common valid document (it then runs only to name the repeat).
bool repeats_a_key(element e) {
  simdjson::dom::array items;
  if (e.get_array().get(items) == simdjson::SUCCESS) {
    for (element item : items)
      if ((item.is_array() || item.is_object()) && repeats_a_key(item)) return true;
    return false;
  }
  object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return false;
  constexpr size_t kFew = 16;
  std::string_view few[kFew];
  std::vector<std::string_view> many;
  size_t n = 0;
  for (auto field : o) {
    if ((field.value.is_array() || field.value.is_object()) && repeats_a_key(field.value)) return true;
    if (n < kFew) {
      for (size_t i = 0; i < n; ++i)
        if (few[i] == field.key) return true;
      few[n++] = field.key;
    } else {
      many.push_back(field.key);
    }
  }
  if (many.empty()) return false;
  many.insert(many.end(), few, few + kFew);
  std::sort(many.begin(), many.end());
  return std::adjacent_find(many.begin(), many.end()) != many.end();
}

std::string normalise_preset(std::string name) {
  const size_t slash = name.rfind('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name;
}

// ---------------------------------------------------------------- model config

/// Field lookup over a config with `text_config` merged over the top level.
struct ConfigView {
  object top;
  object text;
  bool has_text = false;
  bool find(std::string_view key, element* out, std::string* where, const std::string& path) const {
    if (has_text && text.at_key(key).get(*out) == simdjson::SUCCESS) {
      *where = join(join(path, "text_config"), key);
      return true;
    }
    if (top.at_key(key).get(*out) == simdjson::SUCCESS) {
      *where = join(path, key);
      return true;
    }
    return false;
  }
};

/// First non-zero of `keys` (integers, truncated); 0 when all are absent, null or 0.
/// `zero_at` (if given) receives the path of the first key that was present as 0.
Expected<int64_t> first_nonzero(const ConfigView& c, std::initializer_list<const char*> keys, const std::string& path,
                                int64_t max, std::string* zero_at = nullptr) {
  for (const char* key : keys) {
    element e;
    std::string where;
    if (!c.find(key, &e, &where, path) || e.is_null()) continue;
    auto v = read_int(e, where, 0, max, true);
    if (!v) return v.error();
    if (v.value() != 0) return v.value();
    if (zero_at != nullptr && zero_at->empty()) *zero_at = where;
  }
  return int64_t{0};
}

/// A required model dimension that came out 0: absent is missing_field, given as 0
/// (or a fraction below 1) is invalid_value at the path where it was given.
Error zero_dimension(const std::string& path, const char* key, const std::string& zero_at) {
  if (zero_at.empty())
    return make_error("missing_field", join(path, key), "The model needs " + std::string(key) + " > 0.");
  return make_error("invalid_value", zero_at, zero_at + " must be at least 1.");
}

Expected<ModelShape> model_from_object(object top, const std::string& path) {
  ConfigView c;
  c.top = top;
  element text;
  if (top.at_key("text_config").get(text) == simdjson::SUCCESS && text.is_object()) {
    c.text = text.get_object().value_unsafe();
    c.has_text = true;
  }
  ModelShape m;
  std::string layers_zero, hidden_zero, heads_zero;
  auto layers = first_nonzero(c, {"num_hidden_layers"}, path, limits::kMaxLayers, &layers_zero);
  auto hidden = first_nonzero(c, {"hidden_size"}, path, limits::kMaxHidden, &hidden_zero);
  auto heads = first_nonzero(c, {"num_attention_heads"}, path, limits::kMaxHeads, &heads_zero);
  auto kv = first_nonzero(c, {"num_key_value_heads", "num_kv_heads", "multi_query_group_num"}, path, limits::kMaxHeads);
  auto ffn = first_nonzero(c, {"intermediate_size", "ffn_hidden_size"}, path, limits::kMaxIntermediate);
  auto vocab = first_nonzero(c, {"vocab_size"}, path, INT64_C(1) << 40);
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
    std::string where;
    element unused;
    c.find("hidden_size", &unused, &where, path);
    return make_error("invalid_value", where,
                      where + " (" + std::to_string(m.hidden_size) + ") must be at least num_attention_heads (" +
                          std::to_string(m.num_heads) + "): the head dimension would be 0.");
  }
  m.num_kv_heads = kv.value() != 0 ? kv.value() : m.num_heads;
  m.intermediate_size = ffn.value() != 0 ? ffn.value() : 4 * m.hidden_size;
  m.vocab_size = vocab.value();

  element e;
  std::string where;
  if (c.find("bytes_per_param", &e, &where, path)) {
    auto bpp = read_number(e, where);
    if (!bpp) return bpp.error();
    if (!(bpp.value() > 0)) return make_error("invalid_value", where, where + " must be positive.");
    if (bpp.value() > limits::kMaxBytesPerParam)
      return make_error("out_of_range", where, where + " exceeds the limit of 64 bytes per parameter.");
    m.bytes_per_param = bpp.value();
  } else {
    std::string dtype_path = join(path, "torch_dtype");
    if (!c.find("torch_dtype", &e, &where, path) && !c.find("dtype", &e, &where, path)) {
      return make_error("missing_field", dtype_path,
                        "The model has no torch_dtype (or dtype) and no bytes_per_param; give one of them.");
    }
    auto dtype = read_string(e, where);
    if (!dtype) return dtype.error();
    m.dtype = dtype.value();
    m.bytes_per_param = bytes_per_param_of_dtype(m.dtype);
    if (m.bytes_per_param == 0)
      return make_error("invalid_value", where,
                        "Unknown dtype '" + utf8_prefix(m.dtype, 64) +
                            "' (known: float32, float16, bfloat16, int8, uint8, fp8, int4, nf4); set bytes_per_param.");
  }

  // Features the step model ignores: said, not silently dropped.
  auto has = [&](const char* key) {
    element v;
    std::string w;
    return c.find(key, &v, &w, path) && !v.is_null() && !(v.is_bool() && !v.get_bool().value_unsafe());
  };
  if (has("num_local_experts") || has("n_routed_experts") || has("num_experts"))
    m.notes.push_back({"moe_ignored",
                       "This is a mixture-of-experts model; the step model prices it as a dense model "
                       "with intermediate_size " +
                           std::to_string(m.intermediate_size) + "."});
  if (has("kv_lora_rank"))
    m.notes.push_back({"mla_ignored",
                       "Multi-head latent attention (kv_lora_rank) is ignored; KV memory is priced as "
                       "standard attention."});
  if (has("sliding_window") && has("use_sliding_window"))
    m.notes.push_back({"sliding_window_ignored", "The sliding attention window is ignored."});
  if (c.find("head_dim", &e, &where, path) && is_number(e)) {
    // Read as a bounded integer: a wild value (1e300) must not reach an int64 cast.
    auto head_dim = read_int(e, where, 0, limits::kMaxHidden, true);
    if (!head_dim) return head_dim.error();
    const int64_t declared = head_dim.value();
    if (declared != m.hidden_size / m.num_heads)
      m.notes.push_back({"head_dim_differs",
                         "The config's head_dim " + std::to_string(declared) + " differs from hidden_size / heads = " +
                             std::to_string(m.hidden_size / m.num_heads) + "; the step model uses the latter."});
  }
  m.spec = model_spec_from_config(top, m);
  m.source = "config";
  return m;
}

// ---------------------------------------------------------------- request

Expected<Hardware> hardware_from(element e, Hardware hw, const std::string& path) {
  object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return type_error(path, e, "an object");
  for (auto field : o) {
    const std::string where = join(path, field.key);
    double* target = nullptr;
    if (field.key == "TFlopsPeak")
      target = &hw.tflops_peak;
    else if (field.key == "BwPeakTBs")
      target = &hw.bw_peak_tbs;
    else if (field.key == "bwEfficiencyFactor")
      target = &hw.bw_efficiency;
    else if (field.key == "perLayerOverhead")
      target = &hw.per_layer_overhead_us;
    else if (field.key == "MemoryGiB")
      continue;  // in the reference's hardware file; unused
    else
      return unknown_field(path, field.key, "TFlopsPeak, BwPeakTBs, bwEfficiencyFactor, perLayerOverhead");
    auto v = read_number(field.value, where);
    if (!v) return v.error();
    *target = v.value();
    // Zero and negative values are refused by the step model (invalid_value); here
    // only magnitudes that could push a time to infinity or a denormal.
    double low = 0, high = 0;
    if (target == &hw.tflops_peak)
      low = limits::kMinTflopsPeak, high = limits::kMaxTflopsPeak;
    else if (target == &hw.bw_peak_tbs)
      low = limits::kMinBwPeakTBs, high = limits::kMaxBwPeakTBs;
    else if (target == &hw.per_layer_overhead_us)
      high = limits::kMaxPerLayerOverheadUs;
    else
      continue;  // bwEfficiencyFactor: 0 or (0, 1], checked by the step model
    if (v.value() > 0 && (v.value() < low || v.value() > high))
      return make_error("out_of_range", where,
                        where + " must be in [" + format_double(low) + ", " + format_double(high) + "].");
  }
  return hw;
}

/// The common step item, {progress_index, `tokens_key`} as in-range integers, read
/// without building its path; false sends it to step_from's checks, which name the fault.
bool plain_item(element item, std::string_view tokens_key, bool prefill, int64_t* progress, int64_t* tokens) {
  object r;
  if (item.get_object().get(r) != simdjson::SUCCESS) return false;
  bool have_progress = false;
  *progress = 0;
  *tokens = prefill ? -1 : 1;
  for (auto f : r) {
    if (f.value.type() != element_type::INT64) return false;
    const int64_t v = f.value.get_int64().value_unsafe();
    if (v < 0 || v > limits::kMaxTokens) return false;
    if (f.key == "progress_index")
      *progress = v, have_progress = true;
    else if (f.key == tokens_key)
      *tokens = v;
    else
      return false;
  }
  return have_progress && *tokens >= 0;
}

Expected<Step> step_from(element e, const std::string& path) {
  object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return type_error(path, e, "an object");
  Step step;
  size_t total = 0;
  for (auto field : o) {
    const bool prefill = field.key == "prefill_requests";
    if (!prefill && field.key != "decode_requests")
      return unknown_field(path, field.key, "prefill_requests, decode_requests");
    const std::string list_path = join(path, field.key);
    simdjson::dom::array list;
    if (field.value.get_array().get(list) != simdjson::SUCCESS) return type_error(list_path, field.value, "an array");
    total += list.size();
    if (total > static_cast<size_t>(limits::kMaxRequestsPerStep))
      return make_error("too_many_requests", list_path,
                        "The step holds " + std::to_string(total) + " requests; a step may hold at most " +
                            std::to_string(limits::kMaxRequestsPerStep) + " (prefill and decode together).");
    const char* tokens_key = prefill ? "num_new_prefill_tokens" : "num_new_decode_tokens";
    if (prefill)
      step.prefill.reserve(list.size());
    else
      step.decode.reserve(list.size());
    size_t i = 0;
    for (element item : list) {
      int64_t plain_progress = 0, plain_tokens = 0;
      if (plain_item(item, tokens_key, prefill, &plain_progress, &plain_tokens)) {
        ++i;
        if (prefill)
          step.prefill.push_back({plain_progress, plain_tokens});
        else
          step.decode.push_back({plain_progress, plain_tokens});
        continue;
      }
      const std::string item_path = index_path(list_path, i++);
      object r;
      if (item.get_object().get(r) != simdjson::SUCCESS) return type_error(item_path, item, "an object");
      int64_t progress = 0, tokens = prefill ? -1 : 1;
      bool have_progress = false;
      for (auto f : r) {
        const std::string where = join(item_path, f.key);
        int64_t* target = nullptr;
        if (f.key == "progress_index")
          target = &progress, have_progress = true;
        else if (f.key == tokens_key)
          target = &tokens;
        else
          return unknown_field(
              item_path, f.key,
              prefill ? "progress_index, num_new_prefill_tokens" : "progress_index, num_new_decode_tokens");
        auto v = read_int(f.value, where, 0, limits::kMaxTokens, false);
        if (!v) return v.error();
        *target = v.value();
      }
      if (!have_progress)
        return make_error("missing_field", join(item_path, "progress_index"),
                          join(item_path, "progress_index") + " is required (tokens already processed).");
      if (prefill && tokens < 0)
        return make_error("missing_field", join(item_path, tokens_key), join(item_path, tokens_key) + " is required.");
      if (prefill)
        step.prefill.push_back({progress, tokens});
      else
        step.decode.push_back({progress, tokens});
    }
  }
  return step;
}

/// The optional `corrected` object: {"switches": {NAME: bool}, "params": {NAME: number}}.
Expected<CorrectedOverrides> corrected_from(element e, const std::string& path) {
  object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return type_error(path, e, "an object");
  CorrectedOverrides out;
  out.present = true;
  std::string switch_names, param_names;
  for (int i = 0; i < kNumCorrectedSwitches; ++i) switch_names += std::string(i ? ", " : "") + corrected_switch_name(i);
  for (int i = 0; i < kNumCorrectedParams; ++i) param_names += std::string(i ? ", " : "") + corrected_param_name(i);
  for (auto field : o) {
    const std::string where = join(path, field.key);
    const bool switches = field.key == "switches";
    if (!switches && field.key != "params") return unknown_field(path, field.key, "switches, params");
    object items;
    if (field.value.get_object().get(items) != simdjson::SUCCESS) return type_error(where, field.value, "an object");
    for (auto item : items) {
      const std::string item_path = join(where, item.key);
      if (switches) {
        const int index = corrected_switch_index(item.key);
        if (index < 0) return unknown_field(where, item.key, switch_names.c_str());
        bool on = false;
        if (item.value.get_bool().get(on) != simdjson::SUCCESS)
          return type_error(item_path, item.value, "true or false");
        out.switch_state[index] = on ? 1 : 0;
      } else {
        const int index = corrected_param_index(item.key);
        if (index < 0) return unknown_field(where, item.key, param_names.c_str());
        auto v = read_number(item.value, item_path);
        if (!v) return v.error();
        const bool positive = index == kGemmTablePeakTflops || index == kNvlinkBwGBs;
        if (!std::isfinite(v.value()) || v.value() < 0 || (positive && v.value() == 0))
          return make_error(
              "invalid_value", item_path,
              item_path + (positive ? " must be a finite number > 0." : " must be a finite number >= 0."));
        out.param[index] = v.value();
        out.param_set[index] = true;
      }
    }
  }
  return out;
}

Expected<Request> request_from(element e, const std::string& path) {
  object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return type_error(path.empty() ? "request" : path, e, "an object");
  if (repeats_a_key(e)) {
    auto unique = check_unique_keys(e, path);
    if (!unique) return unique.error();
  }
  Request r;
  element model, hardware, step;
  bool have_model = false, have_hardware = false, have_step = false;
  for (auto field : o) {
    const std::string where = join(path, field.key);
    if (field.key == "model")
      model = field.value, have_model = true;
    else if (field.key == "hardware")
      hardware = field.value, have_hardware = true;
    else if (field.key == "step")
      step = field.value, have_step = true;
    else if (field.key == "gpu") {
      auto gpu = read_string(field.value, where);
      if (!gpu) return gpu.error();
      r.hardware.gpu = gpu.value();
    } else if (field.key == "tp") {
      auto tp = read_int(field.value, where, 1, limits::kMaxTp, false);
      if (!tp) return tp.error();
      r.tp = tp.value();
    } else if (field.key == "mode") {
      auto mode = read_string(field.value, where);
      if (!mode) return mode.error();
      r.mode = mode.value();
    } else if (field.key == "corrected") {
      auto corrected = corrected_from(field.value, where);
      if (!corrected) return corrected.error();
      r.corrected = corrected.value();
    } else if (field.key == "id") {
      auto id = read_string(field.value, where);
      if (!id) return id.error();
      r.id = id.value();
      r.has_id = true;
    } else if (field.key == "model_name") {
      auto name = read_string(field.value, where);
      if (!name) return name.error();
      r.model_name = name.value();
    } else if (field.key == "tags") {
      simdjson::dom::array tags;
      if (field.value.get_array().get(tags) != simdjson::SUCCESS)
        return type_error(where, field.value, "an array of strings");
      if (tags.size() > limits::kMaxTags) return make_error("out_of_range", where, where + " has more than 64 tags.");
      size_t i = 0;
      for (element tag : tags) {
        auto s = read_string(tag, index_path(where, i++));
        if (!s) return s.error();
      }
    } else if (field.key == "expected") {
      element t;
      if (field.value.is_object() && field.value.at_key("step_time_us").get(t) == simdjson::SUCCESS) {
        auto v = read_int(t, join(where, "step_time_us"), 0, INT64_MAX, false);
        if (!v) return v.error();
        r.has_expected = true;
        r.expected_step_time_us = v.value();
      }
    } else {
      return unknown_field(path, field.key,
                           "model, gpu, hardware, tp, step, mode, corrected, id, model_name, tags, expected");
    }
  }
  if (!have_model)
    return make_error("missing_field", join(path, "model"),
                      "The request needs a model (preset name or config object).");
  if (!have_step) return make_error("missing_field", join(path, "step"), "The request needs a step.");

  auto hw = hardware_preset(r.hardware.gpu, join(path, "gpu"));
  if (!hw) return hw.error();
  r.hardware = hw.value();
  if (have_hardware) {
    auto overridden = hardware_from(hardware, r.hardware, join(path, "hardware"));
    if (!overridden) return overridden.error();
    r.hardware = overridden.value();
  }

  const std::string model_path = join(path, "model");
  if (model.is_string()) {
    auto name = read_string(model, model_path);
    if (!name) return name.error();
    auto preset = model_preset(name.value(), model_path);
    if (!preset) return preset.error();
    r.model = preset.value();
  } else if (model.is_object()) {
    auto shape = model_from_object(model.get_object().value_unsafe(), model_path);
    if (!shape) return shape.error();
    r.model = shape.value();
  } else {
    return type_error(model_path, model, "a preset name or a config object");
  }
  if (r.model_name.empty() && r.model.source.rfind("preset:", 0) == 0) r.model_name = r.model.source.substr(7);

  auto parsed_step = step_from(step, join(path, "step"));
  if (!parsed_step) return parsed_step.error();
  r.step = std::move(parsed_step).value();
  return r;
}

Error parse_failure(simdjson::error_code code) {
  switch (code) {
    case simdjson::DEPTH_ERROR:
      return make_error("too_deep", "",
                        "The JSON nests deeper than " + std::to_string(limits::kMaxJsonDepth) + " levels.");
    case simdjson::CAPACITY:
      return make_error("too_large", "", "The JSON document is larger than the limit of 16 MiB.");
    case simdjson::UTF8_ERROR:
      return make_error("parse_error", "", "The JSON is not valid UTF-8.");
    case simdjson::NUMBER_ERROR:
    case simdjson::NUMBER_OUT_OF_RANGE:
      return make_error("parse_error", "", "The JSON holds a number that is malformed or out of range.");
    default:
      return make_error("parse_error", "", std::string("Malformed JSON: ") + simdjson::error_message(code));
  }
}

/// Parses `json` with a parser owned by the caller (so the DOM outlives the call).
Expected<element> parse_document(simdjson::dom::parser& parser, std::string_view json, size_t max_depth) {
  if (json.size() > limits::kMaxDocumentBytes)
    return make_error("too_large", "",
                      "The JSON document is longer than the limit of " + std::to_string(limits::kMaxDocumentBytes) +
                          " bytes (16 MiB).");
  if (parser.allocate(std::max<size_t>(json.size(), 64), max_depth) != simdjson::SUCCESS)
    return make_error("too_large", "", "Not enough memory to parse the document.");
  element doc;
  const simdjson::error_code code = parser.parse(json.data(), json.size(), true).get(doc);
  if (code != simdjson::SUCCESS) return parse_failure(code);
  return doc;
}

}  // namespace

double bytes_per_param_of_dtype(std::string_view dtype) {
  if (dtype == "float32") return 4;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  if (dtype == "int8" || dtype == "uint8" || dtype == "fp8" || dtype == "int4" || dtype == "nf4") return 1;
  return 0;
}

Expected<RequestBatch> parse_requests(std::string_view json) {
  simdjson::dom::parser parser;
  auto doc = parse_document(parser, json, limits::kMaxJsonDepth);
  if (!doc) return doc.error();
  RequestBatch batch;
  if (doc->is_array()) {
    batch.is_array = true;
    simdjson::dom::array items = doc->get_array().value_unsafe();
    if (items.size() > limits::kMaxBatch)
      return make_error("too_many_requests", "",
                        "The array holds " + std::to_string(items.size()) + " requests; a document may hold at most " +
                            std::to_string(limits::kMaxBatch) + ".");
    size_t i = 0;
    for (element item : items) batch.requests.push_back(request_from(item, index_path("", i++)));
  } else if (doc->is_object()) {
    batch.requests.push_back(request_from(*doc, ""));
  } else {
    return type_error("request", *doc, "an object (or an array of objects)");
  }
  return batch;
}

Expected<Request> parse_request(std::string_view json) {
  simdjson::dom::parser parser;
  auto doc = parse_document(parser, json, limits::kMaxJsonDepth);
  if (!doc) return doc.error();
  if (!doc->is_object()) return type_error("request", *doc, "an object");
  return request_from(*doc, "");
}

Expected<ModelShape> parse_model_config(std::string_view json, const std::string& path) {
  simdjson::dom::parser parser;
  auto doc = parse_document(parser, json, 256);
  if (!doc) {
    Error e = doc.error();
    e.path = path;
    return e;
  }
  if (!doc->is_object()) return type_error(path, *doc, "a config object");
  return model_from_object(doc->get_object().value_unsafe(), path);
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
    m.source = std::string("preset:") + embedded::kModelPresets[i].name;
    return m;
  }
  std::string known;
  for (const std::string& n : model_preset_names()) known += (known.empty() ? "" : ", ") + n;
  return make_error("unknown_preset", path,
                    "Unknown model preset '" + utf8_prefix(name, 64) + "'; presets: " + known + ".");
}

std::vector<std::string> gpu_names() { return {"H100"}; }

Expected<Hardware> hardware_preset(const std::string& gpu, const std::string& path) {
  std::string upper = gpu;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  if (upper == "H100") return Hardware{};  // the reference's hardware_config.json H100 entry
  return make_error(
      "unknown_gpu", path,
      "No MFU tables for GPU '" + utf8_prefix(gpu, 64) + "'; available: H100 (constants can be overridden).");
}

}  // namespace stepcalc
