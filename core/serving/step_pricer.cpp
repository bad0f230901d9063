#include "serving/step_pricer.h"

#include <cmath>

#include "estimators/step_model.h"

namespace stepcalc {
namespace {

/// Reuses one Request whose step vectors keep their capacity between calls, and
/// prices at summary detail (no per-KV lookup groups, no warnings).
class EstimatorPricer final : public StepPricer {
 public:
  EstimatorPricer(const Request& base, const MfuTables& tables) : request_(base), tables_(tables) {
    request_.step = Step{};
  }

  Expected<StepTimes> price(const Step& step) override {
    request_.step.prefill.assign(step.prefill.begin(), step.prefill.end());
    request_.step.decode.assign(step.decode.begin(), step.decode.end());
    auto priced = price_step(request_, tables_, false);
    if (!priced) return priced.error();
    const StepResult& r = priced.value();
    StepTimes t;
    t.total_us = r.total_us_before_rounding < 1 ? 1 : r.total_us_before_rounding;
    t.prefill_us = r.prefill.present ? r.prefill.time_s() * 1e6 : 0;
    t.decode_us = r.decode.present ? r.decode.time_s() * 1e6 : 0;
    if (!std::isfinite(t.total_us) || !std::isfinite(t.prefill_us) || !std::isfinite(t.decode_us))
      return make_error(
          "out_of_range", "workload",
          "A step of this workload has no finite time; the inputs are beyond what the step model prices.");
    return t;
  }

 private:
  Request request_;
  const MfuTables& tables_;
};

}  // namespace

std::unique_ptr<StepPricer> make_estimator_pricer(const Request& base, const MfuTables& tables) {
  return std::make_unique<EstimatorPricer>(base, tables);
}

Expected<std::unique_ptr<StepPricer>> make_step_pricer(const Request& base, const KernelRegistry& kernels) {
  (void)kernels;  // the measured mode: wired when its estimator lands
  return make_estimator_pricer(base, embedded_h100_tables());
}

}  // namespace stepcalc
