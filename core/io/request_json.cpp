// SPDX-License-Identifier: Apache-2.0
#include "io/request_json.h"

#include <string>

#include "input_limits.h"
#include "io/json_read.h"
#include "io/json_writer.h"
#include "io/mode_json.h"
#include "io/step_json.h"
#include "io/workload_json.h"
#include "kernels/kernel_registry.h"

namespace stepcalc {
namespace {

using json::element;
using json::Path;

/// One of `choices` (an enum-like request field) -> whether it selects FP8.
template <size_t N>
Expected<bool> read_choice(element e, const Path& where, const RequestChoice (&choices)[N]) {
  auto v = json::read_string(e, where);
  if (!v) return v.error();
  std::string known;
  for (const RequestChoice& c : choices) {
    if (v.value() == c.value) return c.fp8;
    known += (known.empty() ? "\"" : ", \"") + std::string(c.value) + "\"";
  }
  const std::string at = where.str();
  return make_error(
      "invalid_value", at,
      at + " must be one of " + known + ", not \"" + utf8_prefix(v.value(), limits::kMaxEchoBytes) + "\".");
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

Expected<Request> request_from(element e, const Path& path, const std::string& mode_override) {
  json::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS)
    return json::type_error(path.str().empty() ? Path("request") : path, e, "an object");
  auto unique = json::check_unique_keys(e, path);
  if (!unique) return unique.error();
  Request r;
  element model, hardware, step;
  bool have_model = false, have_hardware = false, have_step = false;
  for (auto field : o) {
    const Path where = path.key(field.key);
    if (field.key == "model") {
      model = field.value, have_model = true;
    } else if (field.key == "hardware") {
      hardware = field.value, have_hardware = true;
    } else if (field.key == "step") {
      step = field.value, have_step = true;
    } else if (field.key == "gpu") {
      auto gpu = json::read_string(field.value, where);
      if (!gpu) return gpu.error();
      r.hardware.gpu = gpu.value();
    } else if (field.key == "kernels") {
      auto kernels = json::read_string(field.value, where);
      if (!kernels) return kernels.error();
      r.kernels = kernels.value();
    } else if (field.key == "tp") {
      auto tp = json::read_int(field.value, where, 1, limits::kMaxTp, false);
      if (!tp) return tp.error();
      r.tp = tp.value();
    } else if (field.key == "mode") {
      auto mode = json::read_string(field.value, where);
      if (!mode) return mode.error();
      r.mode = mode.value();
    } else if (field.key == "detail") {
      auto detail = json::read_string(field.value, where);
      if (!detail) return detail.error();
      if (detail.value() != "summary" && detail.value() != "full") {
        const std::string at = where.str();
        return make_error("invalid_value", at, at + " must be \"summary\" or \"full\".");
      }
      r.detail = detail.value() == "summary" ? Detail::kSummary : Detail::kFull;
    } else if (field.key == "corrected") {
      auto corrected = corrected_from_json(field.value, where);
      if (!corrected) return corrected.error();
      r.corrected = corrected.value();
    } else if (field.key == "quantization") {
      auto fp8 = read_choice(field.value, where, kQuantizationChoices);
      if (!fp8) return fp8.error();
      r.quantize_fp8 = fp8.value();
    } else if (field.key == "kv_cache_dtype") {
      auto fp8 = read_choice(field.value, where, kKvCacheDtypeChoices);
      if (!fp8) return fp8.error();
      r.kv_cache_fp8 = fp8.value();
    } else if (field.key == "id") {
      auto id = json::read_string(field.value, where);
      if (!id) return id.error();
      r.id = id.value();
      r.has_id = true;
    } else if (field.key == "model_name") {
      auto name = json::read_string(field.value, where);
      if (!name) return name.error();
      r.model_name = name.value();
    } else if (field.key == "tags") {
      auto tags = read_tags(field.value, where);
      if (!tags) return tags.error();
    } else if (field.key == "engine") {
      auto engine = engine_from_json(field.value, where);
      if (!engine) return engine.error();
      r.engine = engine.value();
    } else if (field.key == "workload") {
      auto workload = workload_from_json(field.value, where);
      if (!workload) return workload.error();
      r.workload = workload.value();
      r.has_workload = true;
    } else if (field.key == "gpu_hour_usd") {
      auto usd = json::read_number_in(field.value, where, 0, limits::kMaxGpuHourUsd);
      if (!usd) return usd.error();
      r.gpu_hour_usd = usd.value();
    } else if (field.key == "expected") {
      element t;
      if (field.value.is_object() && field.value.at_key("step_time_us").get(t) == simdjson::SUCCESS) {
        auto v = json::read_int(t, where.key("step_time_us"), 0, INT64_MAX, false);
        if (!v) return v.error();
        r.has_expected = true;
        r.expected_step_time_us = v.value();
      }
    } else {
      return json::unknown_field(path, field.key, request_field_names());
    }
  }
  if (!mode_override.empty()) r.mode = mode_override;
  if (!have_model)
    return json::missing_field(path, "model", "The request needs a model (preset name or config object).");
  // A serving request (with a workload) needs no step: serve ignores it, price refuses its absence.
  if (!have_step && !r.has_workload) return json::missing_field(path, "step", "The request needs a step.");

  auto hw = hardware_preset(r.hardware.gpu, path.key("gpu").str());
  if (!hw) return hw.error();
  r.hardware = hw.value();
  if (r.mode == "measured" || !r.kernels.empty()) {
    // The measured mode reads its GPU's own tables; another mode checks a named version
    // (docs/KERNELS.md) so a request never names tables that do not exist.
    auto which = resolve_kernels(r.hardware.gpu, r.kernels, path.key("gpu").str(), path.key("kernels").str());
    if (!which) return which.error();
    r.hardware.gpu = which->first;
    r.kernels = which->second;
  }
  if (have_hardware) {
    auto overridden = hardware_from_json(hardware, r.hardware, path.key("hardware"));
    if (!overridden) return overridden.error();
    r.hardware = overridden.value();
  }
  auto shape = model_from_json(model, path.key("model"));
  if (!shape) return shape.error();
  r.model = std::move(shape).value();
  if (r.model_name.empty()) r.model_name = r.model.preset;

  r.has_step = have_step;
  if (!have_step) return r;
  auto parsed_step = step_from_json(step, path.key("step"));
  if (!parsed_step) return parsed_step.error();
  r.step = std::move(parsed_step).value();
  return r;
}

}  // namespace

const std::vector<const char*>& request_fields() {
  static const std::vector<const char*> kFields = {
      "model",  "gpu",        "kernels",      "hardware",       "tp",     "step",     "mode",
      "detail", "corrected",  "quantization", "kv_cache_dtype", "engine", "workload", "gpu_hour_usd",
      "id",     "model_name", "tags",         "expected"};
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
