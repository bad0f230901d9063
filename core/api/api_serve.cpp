// SPDX-License-Identifier: Apache-2.0
// The serving entry points of api.h: parse, run the estimate, write the result.
#include <cmath>

#include "api/api.h"
#include "base/input_limits.h"
#include "io/request_json.h"
#include "io/result_json.h"
#include "io/serve_result_json.h"
#include "json/json_writer.h"
#include "serving/serve.h"

namespace stepcalc {
namespace {

/// `work_left` (optional): the simulation work the caller has left (limits::kMaxServeWork
/// for a document's requests together); what this request took is taken off it.
Expected<std::string> serve_request(const Request& request, const KernelRegistry& kernels,
                                    const ServeProgress& progress, double* work_left = nullptr) {
  if (!request.has_workload)
    return make_error("missing_field", "workload",
                      "A serving estimate needs a workload, e.g. {\"input_tokens\": 1024, \"output_tokens\": 128, "
                      "\"concurrency\": 8}.");
  auto result = run_serve(request, kernels, progress, work_left ? *work_left : limits::kMaxServeWork);
  if (!result) return result.error();
  if (work_left) *work_left -= result->trace.work;
  bool all_finite = true;
  std::string json = serve_result_to_json(request, result.value(), &all_finite);
  if (!all_finite)
    return make_error("out_of_range", "workload",
                      "A serving figure would not be a finite number; the inputs are beyond what can be simulated.");
  return json;
}

}  // namespace

Expected<PricedDocument> serve_document(std::string_view json, const std::string& mode_override,
                                        const KernelRegistry& kernels, const ServeProgress& progress, double max_work) {
  if (mode_override.size() > limits::kMaxStringBytes)
    return make_error("out_of_range", "mode",
                      "mode is longer than " + std::to_string(limits::kMaxStringBytes) + " bytes.");
  auto batch = parse_requests(json, mode_override);
  if (!batch) return batch.error();
  PricedDocument out;
  JsonWriter w;
  if (batch->is_array) w.begin_array();
  const double count = static_cast<double>(batch->requests.size());
  size_t index = 0;
  double work_left = max_work;  // one bound for the document's requests together
  for (const Expected<Request>& parsed : batch->requests) {
    const double done = static_cast<double>(index++);
    auto note_failure = [&](const Error& e) {  // for the CLI's one-line message, as price_document
      if (out.failures++ > 0) return;
      out.first_failure = e;
      out.first_failure_index = index - 1;
    };
    if (!parsed && !batch->is_array) return parsed.error();
    if (!parsed) {
      note_failure(parsed.error());
      w.raw(error_to_json(parsed.error()));
      continue;
    }
    Request request = parsed.value();
    // Progress over the whole document: each request is an equal share.
    const ServeProgress scaled =
        progress ? ServeProgress([&](double share) { return progress((done + share) / count); }) : nullptr;
    auto served = serve_request(request, kernels, scaled, &work_left);
    if (!served && (served.error().code == "cancelled" || !batch->is_array)) return served.error();
    if (!served) note_failure(served.error());
    w.raw(served ? served.value() : error_to_json(served.error(), request.id, request.has_id));
  }
  if (batch->is_array) w.end_array();
  out.json = w.take();
  return out;
}

Expected<std::string> serve_json(std::string_view json, const KernelRegistry& kernels, const ServeProgress& progress) {
  auto request = parse_request(json);
  if (!request) return request.error();
  return serve_request(request.value(), kernels, progress);
}

}  // namespace stepcalc
