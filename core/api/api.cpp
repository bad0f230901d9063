// SPDX-License-Identifier: Apache-2.0
#include "api/api.h"

#include <optional>

#include "api/pricing_session.h"
#include "base/input_limits.h"
#include "estimators/measured.h"
#include "estimators/measured_result.h"
#include "estimators/reference/corrected.h"
#include "estimators/warning_codes.h"
#include "io/kernel_catalogue_json.h"
#include "io/model_json.h"
#include "io/request_json.h"
#include "io/result_json.h"
#include "io/result_json_measured.h"
#include "json/json_writer.h"
#include "serving/context.h"
#include "serving/serve.h"

#ifndef STEPCALC_VERSION
#define STEPCALC_VERSION "0.0.0"
#endif

namespace stepcalc {
namespace {

/// Memory as vLLM would plan it, when the model's full shape is known (else an
/// empty value); its warnings (model_does_not_fit, kv_cache_overflow) join `result`'s.
Expected<std::optional<ServingMemory>> step_memory(const Request& request, StepResult* result) {
  for (Warning& w : context_warnings(request)) result->warnings.push_back(std::move(w));
  if (request.model.spec.num_layers <= 0) return std::optional<ServingMemory>();
  auto memory = request_memory(request);
  if (!memory) return memory.error();
  for (Warning& w : memory_warnings(memory.value(), step_kv_tokens(request.step)))
    result->warnings.push_back(std::move(w));
  return std::optional<ServingMemory>(memory.value());
}

/// The measured mode's full result: every operator with its table cells.
Expected<std::string> price_measured_json(PricingSession* pricer, const Request& request) {
  auto plan = pricer->measured_plan(request);
  if (!plan) return plan.error();
  MeasuredBreakdown breakdown;
  price_measured_full(*plan.value(), request.step, &breakdown);
  StepResult result = measured_step_result(request, *plan.value(), breakdown);
  auto memory = step_memory(request, &result);
  if (!memory) return memory.error();
  bool all_finite = true;
  std::string json =
      result_to_json(request, result, embedded_h100_tables(), &all_finite, memory.value() ? &*memory.value() : nullptr,
                     [&](JsonWriter& w) { write_measured(w, *plan.value(), breakdown); });
  if (!all_finite) return non_finite_error();
  return json;
}

}  // namespace

Expected<std::string> price_parsed(PricingSession* pricer, const Request& request, Detail detail) {
  if (!request.has_step) return make_error("missing_field", "step", "The request needs a step.");
  if (detail == Detail::kSummary) {
    auto summary = pricer->summary(request);
    if (!summary) return summary.error();
    return summary_to_json(request, summary.value());
  }
  if (request.mode == Mode::kMeasured) return price_measured_json(pricer, request);
  auto result = pricer->full(request);
  if (!result) return result.error();
  auto memory = step_memory(request, &result.value());
  if (!memory) return memory.error();
  bool all_finite = true;
  std::string json = result_to_json(request, result.value(), embedded_h100_tables(), &all_finite,
                                    memory.value() ? &*memory.value() : nullptr);
  if (!all_finite) return non_finite_error();
  return json;
}

namespace {

/// A mode override is refused beyond the length a request's own mode field may have.
Error mode_too_long() {
  return make_error("out_of_range", "mode",
                    "mode is longer than " + std::to_string(limits::kMaxStringBytes) + " bytes.");
}

}  // namespace

Expected<PricedDocument> price_document(std::string_view json, const std::string& mode_override,
                                        std::optional<Detail> detail) {
  return price_document(json, mode_override, no_kernels(), detail);
}

Expected<PricedDocument> price_document(std::string_view json, const std::string& mode_override,
                                        const KernelRegistry& kernels, std::optional<Detail> detail) {
  if (mode_override.size() > limits::kMaxStringBytes) return mode_too_long();
  auto batch = parse_requests(json, mode_override);
  if (!batch) return batch.error();
  PricingSession pricer(embedded_h100_tables(), kernels);
  PricedDocument out;
  JsonWriter w;
  if (batch->is_array) w.begin_array();
  size_t index = 0;
  for (const Expected<Request>& parsed : batch->requests) {
    // Results are ~100 times larger than the smallest requests: bound the output.
    if (w.size() > limits::kMaxResultBytes)
      return make_error("too_large", "[" + std::to_string(index) + "]",
                        "The results exceed " + std::to_string(limits::kMaxResultBytes >> 20) + " MiB before request " +
                            std::to_string(index) + "; price the array in smaller parts.");
    ++index;
    auto note_failure = [&](const Error& e) {
      if (out.failures++ > 0) return;
      out.first_failure = e;
      out.first_failure_index = index - 1;
    };
    if (!parsed) {
      note_failure(parsed.error());
      w.raw(error_to_json(parsed.error()));
      continue;
    }
    pricer.new_model();  // each element has its own model
    const Request& request = parsed.value();
    auto priced = price_parsed(&pricer, request, detail.value_or(request.detail));
    if (!priced) note_failure(priced.error());
    w.raw(priced ? priced.value() : error_to_json(priced.error(), request.id, request.has_id));
  }
  if (batch->is_array) w.end_array();
  out.json = w.take();
  return out;
}

Expected<std::string> price_json(std::string_view json, std::optional<Detail> detail) {
  return price_json(json, no_kernels(), detail);
}

Expected<std::string> price_json(std::string_view json, const KernelRegistry& kernels, std::optional<Detail> detail) {
  auto request = parse_request(json);
  if (!request) return request.error();
  PricingSession pricer(embedded_h100_tables(), kernels);
  return price_parsed(&pricer, request.value(), detail.value_or(request->detail));
}

Expected<SummaryColumns> price_many(std::string_view json, const std::string& mode_override) {
  return price_many(json, mode_override, no_kernels());
}

Expected<SummaryColumns> price_many(std::string_view json, const std::string& mode_override,
                                    const KernelRegistry& kernels) {
  if (mode_override.size() > limits::kMaxStringBytes) return mode_too_long();
  auto batch = parse_requests(json, mode_override);
  if (!batch) return batch.error();
  PricingSession pricer(embedded_h100_tables(), kernels);
  SummaryColumns out;
  out.reserve(batch->requests.size());
  for (const Expected<Request>& parsed : batch->requests) {
    if (!parsed) {
      out.add_error(parsed.error());
      continue;
    }
    pricer.new_model();  // each element has its own model
    auto summary = pricer.summary(parsed.value());
    if (summary)
      out.add(summary.value());
    else
      out.add_error(summary.error());
  }
  return out;
}

std::string presets_json() {
  JsonWriter w;
  w.begin_object().key("models").begin_array();
  for (const std::string& name : model_preset_names()) {
    auto m = model_preset(name);
    w.begin_object().field("name", name);
    if (m) {
      write_model_shape(w, m.value());
      w.field("torch_dtype", m->dtype);
      w.key("notes").begin_array();
      for (const Warning& n : m->notes) w.value(n.message);
      w.end_array();
    }
    w.end_object();
  }
  w.end_array().key("gpus");
  write_gpu_presets(w);
  // The GPUs' constants (presets/gpus/) and the measured kernel tables built, with
  // their pack files and coverage (docs/KERNELS.md).
  w.key("gpu_specs");
  write_gpu_specs(w);
  w.key("kernels");
  write_kernel_sets(w);
  w.key("modes").begin_array();
  for (const std::string& mode : mode_names()) w.value(mode);
  w.end_array().key("warning_codes").begin_array();
  for (int code = 0; code < kNumWarningCodes; ++code) w.value(warning_code_name(code));
  w.end_array().end_object();
  return w.take();
}

Expected<std::string> resolve_model_json(std::string_view model_json) {
  auto model = parse_model_value(model_json, "model");
  if (!model) return model.error();
  return resolved_model_to_json(model.value());
}

const char* version() { return STEPCALC_VERSION; }

}  // namespace stepcalc
