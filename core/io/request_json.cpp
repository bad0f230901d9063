// SPDX-License-Identifier: Apache-2.0
#include "io/request_json.h"

#include <optional>
#include <string>

#include "base/input_limits.h"
#include "io/mode_json.h"
#include "io/step_json.h"
#include "io/workload_json.h"
#include "json/json_read.h"
#include "json/json_writer.h"
#include "kernels/gpu_spec.h"
#include "kernels/kernel_registry.h"

namespace stepcalc {
namespace {

using json::element;
using json::Path;

/// One of `choices` (an enum-like request field) -> whether it selects FP8.
template <size_t N>
Expected<uint8_t> read_choice(element e, const Path& where, const RequestChoice (&choices)[N]) {
  auto v = json::read_string(e, where);
  if (!v) return v.error();
  std::string known;
  for (const RequestChoice& c : choices) {
    if (v.value() == c.value && c.missing != nullptr)
      return make_error("unsupported", where.str(),
                        where.str() + " \"" + c.value + "\" cannot be priced yet: " + c.missing + ".");
    if (v.value() == c.value) return c.code;
    known += (known.empty() ? "\"" : ", \"") + std::string(c.value) + "\"";
  }
  const std::string at = where.str();
  return make_error(
      "invalid_value", at,
      at + " must be one of " + known + ", not \"" + utf8_prefix(v.value(), limits::kMaxEchoBytes) + "\".");
}

template <typename E>
Expected<bool> store_enum(Expected<uint8_t> v, E* out) {
  if (!v) return v.error();
  *out = static_cast<E>(v.value());
  return true;
}

const std::string& request_field_names() {
  static const std::string kNames = [] {
    std::string out;
    for (const char* name : request_fields()) out += (out.empty() ? "" : ", ") + std::string(name);
    return out;
  }();
  return kNames;
}

Expected<bool> read_tags(element e, const Path& where) {
  simdjson::dom::array tags;
  if (e.get_array().get(tags) != simdjson::SUCCESS) return json::type_error(where, e, "an array of strings");
  if (tags.size() > limits::kMaxTags) {
    const std::string at = where.str();
    return make_error("out_of_range", at, at + " has more than " + std::to_string(limits::kMaxTags) + " tags.");
  }
  size_t i = 0;
  for (element tag : tags) {
    auto s = json::read_string(tag, where.index(i++));
    if (!s) return s.error();
  }
  return true;
}

/// "detail": "summary" or "full".
Expected<Detail> read_detail(element e, const Path& where) {
  auto detail = json::read_string(e, where);
  if (!detail) return detail.error();
  if (detail.value() == "summary") return Detail::kSummary;
  if (detail.value() == "full") return Detail::kFull;
  const std::string at = where.str();
  return make_error("invalid_value", at, at + " must be \"summary\" or \"full\".");
}

/// "expected": only its step_time_us is read (conformance cases carry the rest).
Expected<bool> read_expected(element e, const Path& where, Request* r) {
  element t;
  if (!e.is_object() || e.at_key("step_time_us").get(t) != simdjson::SUCCESS) return true;
  r->has_expected = true;
  return json::store(json::read_int(t, where.key("step_time_us"), 0, INT64_MAX, false), &r->expected_step_time_us);
}

/// Expert parallelism and attention data parallelism (docs/SERVING.md, "Layouts"): vLLM's
/// expert-parallel size is tp x dp (`--enable-expert-parallel`), so `ep` is 1 or that
/// product; only the measured mode has an operator list to split. A MoE model with dp > 1
/// and ep 1 slices its experts over tp x dp GPUs, as vLLM does without
/// `--enable-expert-parallel`.
Expected<bool> supported_layout(const Request& r, const Path& path) {
  // Gated DeltaNet layers are priced from their measured tables only: the reference model
  // (and `corrected`, built on it) knows softmax attention and a growing KV cache.
  if (r.model.spec.is_hybrid_linear() && r.mode != Mode::kMeasured)
    return make_error("unsupported", path.key("mode").str(),
                      "Gated DeltaNet (linear-attention) layers are priced in \"mode\": \"measured\" only, from "
                      "their measured tables.");
  if (r.ep == 1 && r.dp == 1) return true;
  const std::string at = r.ep > 1 ? "ep" : "dp";
  if (r.mode != Mode::kMeasured)
    return make_error(
        "unsupported", path.key(at).str(),
        at + " " + std::to_string(r.ep > 1 ? r.ep : r.dp) + " cannot be priced yet in " + mode_name(r.mode) +
            ": only the measured mode prices expert- and data-parallel layouts; use \"mode\": \"measured\".");
  const bool moe = r.model.spec.is_moe();
  if (r.ep > 1 && !moe)
    return make_error("invalid_value", path.key("ep").str(),
                      "ep splits a MoE model's experts over GPUs; this model has none (use ep 1).");
  if (r.ep > 1 && r.ep != r.tp * r.dp)
    return make_error("invalid_value", path.key("ep").str(),
                      "vLLM's expert-parallel size is tp x dp (" + std::to_string(r.tp) + " x " + std::to_string(r.dp) +
                          " = " + std::to_string(r.tp * r.dp) + "), not " + std::to_string(r.ep) + ": set ep to " +
                          std::to_string(r.tp * r.dp) + " or 1.");
  // Without expert parallelism every expert's intermediate width is sliced over tp x dp GPUs.
  if (moe && r.ep == 1 && r.dp > 1 && r.model.spec.moe.expert_intermediate % (r.tp * r.dp) != 0)
    return make_error("invalid_value", path.key("dp").str(),
                      "tp x dp must divide the experts' width; use ep = tp x dp.");
  return true;
}

/// Keeps a field that is read after the loop (model, hardware and step depend on gpu,
/// kernels and mode, which may come later in the document).
Expected<bool> keep(element value, std::optional<element>* slot) {
  *slot = value;
  return true;
}

Expected<Request> request_from(element e, const Path& path, const std::string& mode_override) {
  if (!e.is_object()) return json::type_error(path.str().empty() ? Path("request") : path, e, "an object");
  auto unique = json::check_unique_keys(e, path);
  if (!unique) return unique.error();
  Request r;
  std::optional<std::string> mode_name;          // parsed once the other fields are read
  std::optional<element> model, hardware, step;  // read once the other fields are known
  auto read = json::read_fields(e, path, [&](std::string_view key, element value, const Path& where) -> Expected<bool> {
    if (key == "model") return keep(value, &model);
    if (key == "hardware") return keep(value, &hardware);
    if (key == "step") return keep(value, &step);
    if (key == "gpu") return json::store(json::read_string(value, where), &r.hardware.gpu);
    if (key == "kernels") return json::store(json::read_string(value, where), &r.kernels);
    if (key == "tp") return json::store(json::read_int(value, where, 1, limits::kMaxTp, false), &r.tp);
    if (key == "ep") return json::store(json::read_int(value, where, 1, limits::kMaxTp, false), &r.ep);
    if (key == "dp") return json::store(json::read_int(value, where, 1, limits::kMaxTp, false), &r.dp);
    if (key == "mode") return json::store(json::read_string(value, where), &mode_name.emplace());
    if (key == "detail") return json::store(read_detail(value, where), &r.detail);
    if (key == "corrected") return json::store(corrected_from_json(value, where), &r.corrected);
    if (key == "quantization") return store_enum(read_choice(value, where, kQuantizationChoices), &r.quantization);
    if (key == "kv_cache_dtype") return store_enum(read_choice(value, where, kKvCacheDtypeChoices), &r.kv_cache);
    if (key == "id") {
      r.has_id = true;
      return json::store(json::read_string(value, where), &r.id);
    }
    if (key == "model_name") return json::store(json::read_string(value, where), &r.model_name);
    if (key == "tags") return read_tags(value, where);
    if (key == "engine") return json::store(engine_from_json(value, where), &r.engine);
    if (key == "workload") {
      r.has_workload = true;
      return json::store(workload_from_json(value, where), &r.workload);
    }
    if (key == "gpu_hour_usd")
      return json::store(json::read_number_in(value, where, 0, limits::kMaxGpuHourUsd), &r.gpu_hour_usd);
    if (key == "expected") return read_expected(value, where, &r);
    return json::unknown_field(path, key, request_field_names());
  });
  if (!read) return read.error();
  if (!mode_override.empty()) mode_name = mode_override;
  // An unknown mode is refused after the rest of the request was read (its other
  // errors come first, as they did when modes were checked at pricing).
  const std::optional<Mode> mode = mode_name ? parse_mode(*mode_name) : std::optional<Mode>(kDefaultMode);
  if (mode) r.mode = *mode;
  const auto known_mode = [&]() -> Expected<Request> {
    if (mode) return std::move(r);
    return make_error("unknown_mode", "mode",
                      "Unknown mode '" + utf8_prefix(*mode_name, limits::kMaxEchoBytes) +
                          "'; known modes: " + mode_name_list() + ".");
  };
  if (!model) return json::missing_field(path, "model", "The request needs a model (preset name or config object).");
  // A serving request (with a workload) needs no step: serve ignores it, price refuses its absence.
  if (!step && !r.has_workload) return json::missing_field(path, "step", "The request needs a step.");

  auto hw = hardware_preset(r.hardware.gpu, path.key("gpu").str());
  if (!hw) return hw.error();
  r.hardware = hw.value();
  if (r.mode == Mode::kMeasured || !r.kernels.empty()) {
    // The measured mode reads its GPU's own tables; another mode checks a named version
    // (docs/KERNELS.md) so a request never names tables that do not exist.
    auto which = resolve_kernels(r.hardware.gpu, r.kernels, path.key("gpu").str(), path.key("kernels").str());
    if (!which) return which.error();
    // A GPU with constants only keeps its name (its memory, its datasheet); the tables'
    // GPU (its sibling) is resolved again where they are read.
    if (const GpuSpec* asked = find_gpu_spec(r.hardware.gpu); asked == nullptr || asked->kernels_from.empty())
      r.hardware.gpu = which->first;
    r.kernels = which->second;
  }
  if (hardware) {
    auto overridden = hardware_from_json(*hardware, r.hardware, path.key("hardware"));
    if (!overridden) return overridden.error();
    r.hardware = overridden.value();
  }
  auto shape = model_from_json(*model, path.key("model"));
  if (!shape) return shape.error();
  r.model = std::move(shape).value();
  if (r.model_name.empty()) r.model_name = r.model.preset;

  if (mode) {
    auto layout = supported_layout(r, path);
    if (!layout) return layout.error();
  }
  r.has_step = step.has_value();
  if (!step) return known_mode();
  auto parsed_step = step_from_json(*step, path.key("step"));
  if (!parsed_step) return parsed_step.error();
  r.step = std::move(parsed_step).value();
  return known_mode();
}

}  // namespace

const std::vector<const char*>& request_fields() {
  static const std::vector<const char*> kFields = {
      "model",        "gpu",          "kernels",        "hardware", "tp",
      "ep",           "dp",           "step",           "mode",     "detail",
      "corrected",    "quantization", "kv_cache_dtype", "engine",   "workload",
      "gpu_hour_usd", "id",           "model_name",     "tags",     "expected"};
  return kFields;
}

Expected<RequestBatch> parse_requests(std::string_view text, const std::string& mode_override) {
  simdjson::dom::parser parser;
  auto doc = json::parse_document(parser, text, limits::kMaxJsonDepth);
  if (!doc) return doc.error();
  RequestBatch batch;
  if (doc->is_array()) {
    batch.is_array = true;
    simdjson::dom::array items = doc->get_array().value_unsafe();
    if (items.size() > limits::kMaxBatch)
      return make_error("too_many_requests", "",
                        "The array holds " + std::to_string(items.size()) + " requests; a document may hold at most " +
                            std::to_string(limits::kMaxBatch) + ".");
    const Path root;
    size_t i = 0;
    for (element item : items) batch.requests.push_back(request_from(item, root.index(i++), mode_override));
  } else if (doc->is_object()) {
    batch.requests.push_back(request_from(*doc, Path(), mode_override));
  } else {
    return json::type_error(Path("request"), *doc, "an object (or an array of objects)");
  }
  return batch;
}

Expected<Request> parse_request(std::string_view text) {
  simdjson::dom::parser parser;
  auto doc = json::parse_document(parser, text, limits::kMaxJsonDepth);
  if (!doc) return doc.error();
  if (!doc->is_object()) return json::type_error(Path("request"), *doc, "an object");
  return request_from(*doc, Path(), "");
}

}  // namespace stepcalc
