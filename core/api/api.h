// SPDX-License-Identifier: Apache-2.0
// The calculator's front door: JSON text in, JSON text (or summary columns) out. The
// CLI and the Wasm bindings are thin shells over these functions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/input_limits.h"
#include "estimators/step_summary.h"
#include "kernels/kernel_registry.h"

namespace stepcalc {

class PricingSession;
struct Request;

/// Result of pricing a document of one request or an array of them.
struct PricedDocument {
  std::string json;                ///< result object, or array of result/error objects in order
  int failures = 0;                ///< elements that were errors
  Error first_failure;             ///< the first of them (for a one-line message), when failures > 0
  size_t first_failure_index = 0;  ///< its position in an array document
};

/// request's mode, `detail` (if given) its detail level (else the request's own, full
/// by default). A document-level failure is the error.
Expected<PricedDocument> price_document(std::string_view json, const std::string& mode_override = "",
                                        std::optional<Detail> detail = std::nullopt);
/// The same with measured kernel tables: requests whose mode needs them get the
/// database of their "gpu" and "kernels" from `kernels` (docs/KERNELS.md).
Expected<PricedDocument> price_document(std::string_view json, const std::string& mode_override,
                                        const KernelRegistry& kernels, std::optional<Detail> detail = std::nullopt);

/// Prices exactly one request object; its result JSON (at `detail` if given, else
/// the request's own, full by default) or its error.
Expected<std::string> price_json(std::string_view json, std::optional<Detail> detail = std::nullopt);
Expected<std::string> price_json(std::string_view json, const KernelRegistry& kernels,
                                 std::optional<Detail> detail = std::nullopt);

/// One parsed request's result JSON at `detail`, priced through `session` (its setups and
/// measured plans reused from call to call: call session->new_model() when the request's
/// model or GPU may differ from the last one's); what price_json gives for its JSON text.
Expected<std::string> price_parsed(PricingSession* session, const Request& request, Detail detail);

/// Summaries of every request of `json` (an object or an array), as columns; a bad
/// element is a failed point. `mode_override` as for price_document.
Expected<SummaryColumns> price_many(std::string_view json, const std::string& mode_override = "");
Expected<SummaryColumns> price_many(std::string_view json, const std::string& mode_override,
                                    const KernelRegistry& kernels);

/// KV length of the decode request a decode_batch sweep repeats when the step has none.
constexpr int64_t kSweepDefaultDecodeKv = 1024;

/// One axis a sweep may vary; values must be whole numbers in [min, max].
struct SweepAxis {
  const char* name;
  const char* unit;
  int64_t min;
  int64_t max;
};

/// The sweep axes: prefill_tokens (new tokens of the first prefill request; one with no
/// prefix is added if the step has none), decode_batch (the step's decodes repeated in
/// order; kSweepDefaultDecodeKv when it has none), decode_kv (every decode's KV length;
/// one is added if there is none), tp.
const std::vector<SweepAxis>& sweep_axes();

/// Prices the request once per value along `axis` (one of sweep_axes()). Returns a
/// JSON array of {value, step_time_us, total_us, bound, prefill_s, decode_s} or
/// {value, error} per point.
Expected<std::string> sweep_json(std::string_view request_json, const std::string& axis,
                                 const std::vector<double>& values);
Expected<std::string> sweep_json(std::string_view request_json, const std::string& axis,
                                 const std::vector<double>& values, const KernelRegistry& kernels);

/// The same sweep at summary detail, as columns (a value out of range is a failed point).
Expected<SummaryColumns> sweep_columns(std::string_view request_json, const std::string& axis,
                                       const std::vector<double>& values);
Expected<SummaryColumns> sweep_columns(std::string_view request_json, const std::string& axis,
                                       const std::vector<double>& values, const KernelRegistry& kernels);

/// A 2-D sweep for heat maps: point i * values_x.size() + j sets `axis_y` to
/// values_y[i] and `axis_x` to values_x[j] (decode_batch is applied first). The axes
/// differ; at most limits::kMaxSweepPoints points in all.
Expected<SummaryColumns> sweep_2d(std::string_view request_json, const std::string& axis_x,
                                  const std::vector<double>& values_x, const std::string& axis_y,
                                  const std::vector<double>& values_y);
Expected<SummaryColumns> sweep_2d(std::string_view request_json, const std::string& axis_x,
                                  const std::vector<double>& values_x, const std::string& axis_y,
                                  const std::vector<double>& values_y, const KernelRegistry& kernels);

/// Called during a serving estimate with the share of requests finished (0..1);
/// returning false cancels it (error "cancelled").
using ServeProgress = std::function<bool(double finished_share)>;

/// Serving estimate (docs/SERVING.md) of every request of `json`: one request
/// object with a `workload` (its error is the error), or an array of them (each
/// result or error in order). `mode_override` as for price_document; `kernels`
/// supplies the measured tables when a request's mode needs them. The requests share one
/// bound on simulation work, `max_work` (docs/INPUT.md): each gets what the earlier left.
Expected<PricedDocument> serve_document(std::string_view json, const std::string& mode_override = "",
                                        const KernelRegistry& kernels = no_kernels(),
                                        const ServeProgress& progress = nullptr,
                                        double max_work = limits::kMaxServeWork);

/// The serving estimate of exactly one request object.
Expected<std::string> serve_json(std::string_view json, const KernelRegistry& kernels = no_kernels(),
                                 const ServeProgress& progress = nullptr);

/// Deployment plan (docs/PLAN.md) of one plan request object: every candidate GPU x TP x
/// engine setting served in the measured mode, the fewest replicas meeting the latency
/// target, the cheapest recommended with its `vllm serve` line. `progress` gets the share
/// of candidates done; returning false cancels (error "cancelled"). `workers` > 1 without
/// `progress`: the candidates are searched on that many threads in a build with them (the
/// native one), the same document to the byte.
Expected<std::string> plan_json(std::string_view json, const KernelRegistry& kernels = no_kernels(),
                                const ServeProgress& progress = nullptr, int workers = 1);

/// {"models": [...], "gpus": [{name, TFlopsPeak, ...}], "modes": [...], "warning_codes": [...]}
std::string presets_json();

/// A request's `model` value (JSON text of a preset name or a config object) resolved
/// without pricing anything: {preset, source, shape fields, head_dim, torch_dtype,
/// notes: [{code, message}]}; errors have paths from "model".
Expected<std::string> resolve_model_json(std::string_view model_json);

/// Library version (CMake project version).
const char* version();

/// The measured kernel set `gpu` (any case) and `version` ("" = the GPU's default)
/// resolve to, as {gpu, version, parts: [{name, file}]}: what loadKernels fetches.
/// unknown_gpu (path gpu) or unknown_kernels (path kernels) otherwise.
Expected<std::string> kernel_set_json(const std::string& gpu, const std::string& version);

}  // namespace stepcalc
