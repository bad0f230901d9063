#include "api.h"

#include <cmath>
#include <optional>

#include "estimators/corrected.h"
#include "estimators/measured.h"
#include "estimators/measured_result.h"
#include "estimators/step_model.h"
#include "input_limits.h"
#include "io/json_writer.h"
#include "io/kernel_catalogue_json.h"
#include "io/model_json.h"
#include "io/request_json.h"
#include "io/result_json.h"
#include "io/result_json_measured.h"
#include "serving/serve.h"

#ifndef STEPCALC_VERSION
#define STEPCALC_VERSION "0.0.0"
#endif

namespace stepcalc {
namespace {

/// A result with NaN or infinity is refused rather than shown (JSON would say null).
Error non_finite_error() {
  return make_error("out_of_range", "step",
                    "A result would not be a finite number; the inputs are beyond what the step model can price.");
}

/// The measured mode's plan for `request`: its GPU's tables from `kernels`.
Expected<MeasuredPlan> measured_plan(const Request& request, const KernelRegistry& kernels) {
  auto db = kernels.get(request.hardware.gpu, request.kernels, "gpu");
  if (!db) return db.error();
  return plan_measured(request, db.value());
}

/// Memory as vLLM would plan it, when the model's full shape is known (else an
/// empty value); its warnings (model_does_not_fit, kv_cache_overflow) join `result`'s.
Expected<std::optional<ServingMemory>> step_memory(const Request& request, StepResult* result) {
  if (request.model.spec.num_layers <= 0) return std::optional<ServingMemory>();
  auto memory = request_memory(request);
  if (!memory) return memory.error();
  for (Warning& w : memory_warnings(memory.value(), step_kv_tokens(request.step)))
    result->warnings.push_back(std::move(w));
  return std::optional<ServingMemory>(memory.value());
}

Expected<std::string> price_measured(const Request& request, const KernelRegistry& kernels) {
  auto plan = measured_plan(request, kernels);
  if (!plan) return plan.error();
  MeasuredBreakdown breakdown;
  price_measured_full(plan.value(), request.step, &breakdown);
  StepResult result = measured_step_result(request, plan.value(), breakdown);
  auto memory = step_memory(request, &result);
  if (!memory) return memory.error();
  bool all_finite = true;
  std::string json =
      result_to_json(request, result, embedded_h100_tables(), &all_finite, memory.value() ? &*memory.value() : nullptr,
                     [&](JsonWriter& w) { write_measured(w, plan.value(), breakdown); });
  if (!all_finite) return non_finite_error();
  return json;
}

Expected<std::string> price_request(const Request& request, const KernelRegistry& kernels) {
  if (!request.has_step) return make_error("missing_field", "step", "The request needs a step.");
  if (request.mode == "measured") return price_measured(request, kernels);
  const MfuTables& tables = embedded_h100_tables();
  auto result = price_step(request, tables);
  if (!result) return result.error();
  auto memory = step_memory(request, &result.value());
  if (!memory) return memory.error();
  bool all_finite = true;
  std::string json =
      result_to_json(request, result.value(), tables, &all_finite, memory.value() ? &*memory.value() : nullptr);
  if (!all_finite) return non_finite_error();
  return json;
}

const SweepAxis* find_sweep_axis(const std::string& name) {
  for (const SweepAxis& a : sweep_axes())
    if (name == a.name) return &a;
  return nullptr;
}

std::string sweep_axis_names() {
  std::string out;
  for (const SweepAxis& a : sweep_axes()) out += (out.empty() ? "" : ", ") + std::string(a.name);
  return out;
}

bool apply_sweep_value(Request* r, const std::string& axis, int64_t v) {
  Step& s = r->step;
  if (axis == "prefill_tokens") {
    if (s.prefill.empty()) s.prefill.push_back({0, 0});
    s.prefill.front().new_tokens = v;
  } else if (axis == "decode_batch") {
    const std::vector<DecodeRequest> base =
        s.decode.empty() ? std::vector<DecodeRequest>{{kSweepDefaultDecodeKv, 1}} : s.decode;
    s.decode.resize(static_cast<size_t>(v));
    for (size_t i = 0; i < s.decode.size(); ++i) s.decode[i] = base[i % base.size()];
  } else if (axis == "decode_kv") {
    if (s.decode.empty()) s.decode.push_back({0, 1});
    for (DecodeRequest& d : s.decode) d.progress_index = v;
  } else if (axis == "tp") {
    r->tp = v;
  } else {
    return false;
  }
  return true;
}

}  // namespace

const std::vector<SweepAxis>& sweep_axes() {
  static const std::vector<SweepAxis> kAxes = {
      {"prefill_tokens", "tokens", 0, limits::kMaxTokens},
      {"decode_batch", "requests", 1, limits::kMaxRequestsPerStep},
      {"decode_kv", "tokens", 0, limits::kMaxTokens},
      {"tp", "GPUs", 1, limits::kMaxTp},
  };
  return kAxes;
}

Expected<PricedDocument> price_document(std::string_view json, const std::string& mode_override) {
  return price_document(json, mode_override, no_kernels());
}

Expected<PricedDocument> price_document(std::string_view json, const std::string& mode_override,
                                        const KernelRegistry& kernels) {
  if (mode_override.size() > limits::kMaxStringBytes)  // as a request's own mode field
    return make_error("out_of_range", "mode",
                      "mode is longer than " + std::to_string(limits::kMaxStringBytes) + " bytes.");
  auto batch = parse_requests(json, mode_override);
  if (!batch) return batch.error();
  PricedDocument out;
  JsonWriter w;
  if (batch->is_array) w.begin_array();
  size_t index = 0;
  for (const Expected<Request>& parsed : batch->requests) {
    // Results are ~100 times larger than the smallest requests: bound the output.
    if (w.str().size() > limits::kMaxResultBytes)
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
    Request request = parsed.value();
    if (!mode_override.empty()) request.mode = mode_override;
    auto priced = price_request(request, kernels);
    if (!priced) note_failure(priced.error());
    w.raw(priced ? priced.value() : error_to_json(priced.error(), request.id, request.has_id));
  }
  if (batch->is_array) w.end_array();
  out.json = w.take();
  return out;
}

Expected<std::string> price_json(std::string_view json) { return price_json(json, no_kernels()); }

Expected<std::string> price_json(std::string_view json, const KernelRegistry& kernels) {
  auto request = parse_request(json);
  if (!request) return request.error();
  return price_request(request.value(), kernels);
}

Expected<std::string> sweep_json(std::string_view json, const std::string& axis, const std::vector<double>& values) {
  return sweep_json(json, axis, values, no_kernels());
}

Expected<std::string> sweep_json(std::string_view json, const std::string& axis, const std::vector<double>& values,
                                 const KernelRegistry& kernels) {
  auto parsed = parse_request(json);
  if (!parsed) return parsed.error();
  if (values.size() > limits::kMaxSweepPoints)
    return make_error("out_of_range", "values",
                      "A sweep may have at most " + std::to_string(limits::kMaxSweepPoints) + " points.");
  const Request base = parsed.value();
  const SweepAxis* axis_info = find_sweep_axis(axis);
  if (axis_info == nullptr)
    return make_error(
        "invalid_value", "axis",
        "Unknown sweep axis '" + utf8_prefix(axis, limits::kMaxEchoBytes) + "'; axes: " + sweep_axis_names() + ".");
  Request probe = base;
  apply_sweep_value(&probe, axis, 1);
  const MfuTables& tables = embedded_h100_tables();
  const int64_t min = axis_info->min;
  const int64_t max = axis_info->max;
  auto in_range = [&](double v) {
    return std::isfinite(v) && v == std::trunc(v) && v >= static_cast<double>(min) && v <= static_cast<double>(max);
  };
  // Bound the work (requests priced over all points), not only the point count.
  int64_t work = 0;
  for (double v : values) {
    if (!in_range(v)) continue;
    const int64_t fixed =
        static_cast<int64_t>(probe.step.prefill.size() + (axis == "decode_batch" ? 0 : probe.step.decode.size()));
    work += fixed + (axis == "decode_batch" ? static_cast<int64_t>(v) : 0);
    if (work > limits::kMaxSweepRequests)
      return make_error("too_many_requests", "values",
                        "The sweep would price more than " + std::to_string(limits::kMaxSweepRequests) +
                            " requests in all; use fewer or smaller points.");
  }
  if (static_cast<int64_t>(probe.step.prefill.size() + probe.step.decode.size()) > limits::kMaxRequestsPerStep)
    return make_error("too_many_requests", "step",
                      "A step may hold at most " + std::to_string(limits::kMaxRequestsPerStep) + " requests.");
  // The measured mode resolves its plan once per TP (one plan for every other axis).
  const bool measured = base.mode == "measured";
  Expected<MeasuredPlan> plan = make_error("", "", "");
  int64_t plan_tp = 0;
  JsonWriter w;
  w.begin_array();
  Request r = base;
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    w.begin_object().field("value", v);
    if (!in_range(v)) {
      const Error e = make_error("invalid_value", "values[" + std::to_string(i) + "]",
                                 "Sweep values for " + axis + " must be whole numbers in [" + std::to_string(min) +
                                     ", " + std::to_string(max) + "].");
      write_error(w, e);
      w.end_object();
      continue;
    }
    if (axis == "decode_batch") r.step.decode = base.step.decode;
    apply_sweep_value(&r, axis, static_cast<int64_t>(v));
    Expected<StepResult> priced = make_error("", "", "");
    if (measured) {
      if (plan_tp != r.tp) plan = measured_plan(r, kernels), plan_tp = r.tp;
      if (plan) {
        MeasuredBreakdown summary;
        summary.totals = price_measured_summary(plan.value(), r.step);
        priced = measured_step_result(r, plan.value(), summary);
      } else {
        priced = plan.error();
      }
    } else {
      priced = price_step(r, tables, false);
    }
    if (priced && !(std::isfinite(priced->total_us_before_rounding) && std::isfinite(priced->prefill.time_s()) &&
                    std::isfinite(priced->decode.time_s())))
      priced = non_finite_error();
    if (priced) {
      w.field("step_time_us", priced->step_time_us)
          .field("total_us", priced->total_us_before_rounding)
          .field("bound", priced->bound)
          .field("prefill_s", priced->prefill.time_s())
          .field("decode_s", priced->decode.time_s());
    } else {
      const Error& e = priced.error();
      write_error(w, e);
    }
    w.end_object();
  }
  w.end_array();
  return w.take();
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
