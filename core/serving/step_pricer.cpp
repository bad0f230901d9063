// SPDX-License-Identifier: Apache-2.0
#include "serving/step_pricer.h"

#include <cmath>
#include <utility>

#include "estimators/measured.h"
#include "estimators/reference/step_model.h"

namespace stepcalc {
namespace {

/// The reference modes' warnings that hold for every step of a setup (model x GPU x TP x
/// mode x precision), as price() words them: a serving result carries them too.
bool step_independent(const std::string& code) {
  static const char* const kCodes[] = {"gpu_h100_tables",   "quantization_not_priced",     "tp_does_not_divide_heads",
                                       "tp_above_kv_heads", "tp_does_not_divide_kv_heads", "head_dim_not_integer"};
  for (const char* c : kCodes)
    if (code == c) return true;
  return false;
}

/// Reuses one Request whose step vectors keep their capacity between calls, resolves
/// the setup (model x GPU x TP x mode) once, and prices at summary detail with warm
/// scratch: no allocation per step.
class EstimatorPricer final : public StepPricer {
 public:
  EstimatorPricer(const Request& base, const MfuTables& tables)
      : request_(base), setup_(prepare_pricing(base, tables)) {
    request_.step = Step{};
    scratch_.remember_decode_terms = true;  // a simulation's steps share most KV lengths with the step before
    notes_ = base.model.notes;
    // The step-independent warnings (another GPU's tables, a precision not priced, a TP vLLM
    // refuses), as price() words them.
    Request probe = base;
    probe.step = Step{};
    probe.step.decode.push_back({1, 1});
    auto priced = price_step(probe, tables, true);
    if (priced)
      for (const Warning& w : priced->warnings)
        if (step_independent(w.code)) notes_.push_back(w);
  }

  std::vector<Warning> notes() const override { return notes_; }

  Expected<StepTimes> price(const Step& step) override {
    if (!setup_) return setup_.error();
    request_.step.prefill.assign(step.prefill.begin(), step.prefill.end());
    request_.step.decode.assign(step.decode.begin(), step.decode.end());
    auto priced = price_summary(setup_.value(), request_, &scratch_);
    if (!priced) return priced.error();
    const StepSummary& r = priced.value();
    StepTimes t;
    t.total_us = r.total_us < 1 ? 1 : r.total_us;
    t.prefill_us = r.prefill_s * 1e6;  // 0 without prefill
    t.decode_us = r.decode_s * 1e6;
    if (!std::isfinite(t.total_us) || !std::isfinite(t.prefill_us) || !std::isfinite(t.decode_us))
      return make_error(
          "out_of_range", "workload",
          "A step of this workload has no finite time; the inputs are beyond what the step model prices.");
    return t;
  }

 private:
  Request request_;
  Expected<PricingSetup> setup_;
  PricingScratch scratch_;
  std::vector<Warning> notes_;
};

/// The measured mode: the operator plan resolved once on the GPU's tables, each step
/// priced by the allocation-free summary path.
class MeasuredPricer final : public StepPricer {
 public:
  explicit MeasuredPricer(MeasuredPlan plan) : plan_(std::move(plan)) {}

  std::vector<Warning> notes() const override { return plan_.warnings; }

  Expected<StepTimes> price(const Step& step) override {
    const MeasuredTotals m = price_measured_summary(plan_, step, &memo_);
    StepTimes t;
    t.total_us = m.total_us < 1 ? 1 : m.total_us;
    t.prefill_us = m.prefill_us;
    t.decode_us = m.decode_us;
    if (!std::isfinite(t.total_us) || !std::isfinite(t.prefill_us) || !std::isfinite(t.decode_us))
      return make_error("out_of_range", "workload",
                        "A step of this workload has no finite time in the measured tables' range.");
    return t;
  }

 private:
  MeasuredPlan plan_;
  MeasuredRowsMemo memo_;  ///< the operators' times by row counts, across steps
};

}  // namespace

std::unique_ptr<StepPricer> make_estimator_pricer(const Request& base, const MfuTables& tables) {
  return std::make_unique<EstimatorPricer>(base, tables);
}

Expected<std::unique_ptr<StepPricer>> make_step_pricer(const Request& base, const KernelRegistry& kernels) {
  if (base.mode != Mode::kMeasured) return make_estimator_pricer(base, embedded_h100_tables());
  auto db = kernels.get(base.hardware.gpu, base.kernels, "gpu");
  if (!db) return db.error();
  auto plan = plan_measured(base, db.value());
  if (!plan) return plan.error();
  return std::unique_ptr<StepPricer>(std::make_unique<MeasuredPricer>(std::move(plan).value()));
}

}  // namespace stepcalc
