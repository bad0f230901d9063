// SPDX-License-Identifier: Apache-2.0
#include "api/pricing_session.h"

#include "estimators/measured_result.h"
#include "serving/context.h"
#include "serving/serve.h"

namespace stepcalc {

Error non_finite_error() {
  return make_error("out_of_range", "step",
                    "A result would not be a finite number; the inputs are beyond what the step model can price.");
}

PricingSession::PricingSession(const MfuTables& tables, const KernelRegistry& kernels)
    : tables_(&tables), kernels_(&kernels), plan_(Error{}), memory_(Error{}) {
  entries_.reserve(kMaxSetups);
}

Expected<const MeasuredPlan*> PricingSession::measured_plan(const Request& r) {
  const Request& p = plan_inputs_;
  if (!plan_valid_ || !same_pricing_inputs(p, r) || p.kernels != r.kernels || p.quantization != r.quantization ||
      p.kv_cache != r.kv_cache) {
    auto db = kernels_->get(r.hardware.gpu, r.kernels, "gpu");
    plan_ = db ? plan_measured(r, db.value()) : Expected<MeasuredPlan>(db.error());
    plan_inputs_ = r;
    plan_inputs_.step = Step{};
    plan_valid_ = true;
  }
  if (!plan_) return plan_.error();
  return &plan_.value();
}

Expected<const PricingSetup*> PricingSession::setup_for(const Request& r) {
  ++clock_;
  for (Entry& e : entries_) {
    if (!same_pricing_inputs(e.inputs, r)) continue;
    e.last_used = clock_;
    return &e.setup;
  }
  auto setup = prepare_pricing(r, *tables_);
  if (!setup) return setup.error();
  Entry* slot = nullptr;
  if (entries_.size() < kMaxSetups) {
    slot = &entries_.emplace_back();
  } else {
    slot = &entries_.front();
    for (Entry& e : entries_)
      if (e.last_used < slot->last_used) slot = &e;
  }
  slot->inputs.model = r.model;
  slot->inputs.hardware = r.hardware;
  slot->inputs.tp = r.tp;
  slot->inputs.mode = r.mode;
  slot->inputs.corrected = r.corrected;
  slot->setup = std::move(setup.value());
  slot->last_used = clock_;
  return &slot->setup;
}

Expected<const ServingMemory*> PricingSession::memory_for(const Request& r) {
  if (r.model.spec.num_layers <= 0) return static_cast<const ServingMemory*>(nullptr);
  const Request& p = memory_inputs_;
  const EngineSettings &a = p.engine, &b = r.engine;
  const bool same_engine = a.max_num_batched_tokens == b.max_num_batched_tokens && a.max_num_seqs == b.max_num_seqs &&
                           a.gpu_memory_utilization == b.gpu_memory_utilization && a.block_size == b.block_size &&
                           a.enable_chunked_prefill == b.enable_chunked_prefill;
  if (!memory_valid_ || !same_engine || !same_pricing_inputs(p, r) || p.quantization != r.quantization ||
      p.kv_cache != r.kv_cache || p.kernels != r.kernels) {
    memory_ = request_memory(r);
    memory_inputs_ = r;
    memory_inputs_.step = Step{};
    memory_valid_ = true;
  }
  if (!memory_) return memory_.error();
  return &memory_.value();
}

Expected<StepSummary> PricingSession::summary(const Request& r) {
  auto s = step_summary(r);
  if (!s) return s;
  if (!context_warnings(r).empty()) s.value().warnings.add(kWarnBeyondContext);
  auto memory = memory_for(r);
  if (!memory) return memory.error();
  if (memory.value() != nullptr)
    for (const Warning& w : memory_warnings(*memory.value(), step_kv_tokens(r.step))) {
      const int code = warning_code_index(w.code);
      if (code >= 0) s.value().warnings.add(static_cast<WarningCode>(code));
    }
  return s;
}

Expected<StepSummary> PricingSession::step_summary(const Request& r) {
  if (r.mode == Mode::kMeasured) {
    auto plan = measured_plan(r);
    if (!plan) return plan.error();
    // The operator list's lookups decide the table_* warnings, so the summary prices it
    // in full (into a reused breakdown) to carry exactly the full result's codes.
    price_measured_full(*plan.value(), r.step, &measured_);
    StepSummary s = summarize(measured_step_result(r, *plan.value(), measured_));
    if (!summary_is_finite(s)) return non_finite_error();
    return s;
  }
  auto setup = setup_for(r);
  if (!setup) return setup.error();
  auto summary = price_summary(*setup.value(), r, &scratch_);
  if (summary && !summary_is_finite(summary.value())) return non_finite_error();
  return summary;
}

Expected<StepResult> PricingSession::full(const Request& r, bool detail) {
  auto setup = setup_for(r);
  if (!setup) return setup.error();
  return price_full(*setup.value(), r, &scratch_, detail);
}

}  // namespace stepcalc
