// SPDX-License-Identifier: Apache-2.0
// A pricing session: many steps that share their model, GPU, TP and mode (a sweep, a batch, a
// serving simulation, a page's background work): the setup is resolved once per
// distinct pricing inputs, and the scratch buffers are reused, so a warm summary
// pricing allocates nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "base/error.h"
#include "estimators/measured.h"
#include "estimators/reference/pricing_setup.h"
#include "estimators/reference/step_model.h"
#include "estimators/step_summary.h"
#include "kernels/kernel_registry.h"
#include "kernels/reference/mfu_tables.h"
#include "request/request.h"
#include "serving/memory.h"

namespace stepcalc {

/// Not thread-safe: one per thread (or per Wasm instance).
class PricingSession {
 public:
  /// `kernels`: the measured mode's tables (a request in that mode gets its GPU's).
  explicit PricingSession(const MfuTables& tables, const KernelRegistry& kernels = no_kernels());

  /// Says the next requests may carry another model (a batch's next element): the
  /// measured plan and the memory are kept only while the pricing inputs
  /// (same_pricing_inputs, precision, kernels, engine) stay and no new model is announced.
  void new_model() { plan_valid_ = memory_valid_ = false; }

  /// The measured plan of `request` (its GPU's tables, TP and precision), kept while
  /// those and the model stay the same. Valid until the next call on this session.
  Expected<const MeasuredPlan*> measured_plan(const Request& request);

  /// The setup of `request`'s pricing inputs (same_pricing_inputs), kept for the
  /// last few distinct inputs. Valid until the next call on this session.
  Expected<const PricingSetup*> setup_for(const Request& request);

  /// Memory as vLLM would plan it for `request` (full results carry its warnings), or
  /// nullptr when the model's full shape is unknown; kept like the measured plan.
  Expected<const ServingMemory*> memory_for(const Request& request);

  /// `request` at summary detail: equal to summarize(full(request)) plus the memory
  /// warnings the API adds to a full result, numbers refused
  /// as in the full result when not finite.
  Expected<StepSummary> summary(const Request& request);

  /// `request` at full detail, as price_step(request, tables) (blis-v2 and corrected).
  Expected<StepResult> full(const Request& request, bool detail = true);

 private:
  /// The summary of the step alone (no memory warnings).
  Expected<StepSummary> step_summary(const Request& request);

  static constexpr size_t kMaxSetups = 8;
  struct Entry {
    Request inputs;  ///< the pricing inputs (no step)
    PricingSetup setup;
    uint64_t last_used = 0;
  };
  const MfuTables* tables_;
  std::vector<Entry> entries_;
  uint64_t clock_ = 0;
  PricingScratch scratch_;
  const KernelRegistry* kernels_;
  bool plan_valid_ = false;
  Request plan_inputs_;  ///< the request (without its step) the plan was made for
  Expected<MeasuredPlan> plan_;
  MeasuredBreakdown measured_;  ///< the measured summary's scratch
  bool memory_valid_ = false;
  Request memory_inputs_;  ///< the request (without its step) the memory was planned for
  Expected<ServingMemory> memory_;
};

/// The error a result with a NaN or infinity gets (JSON would say null).
Error non_finite_error();

}  // namespace stepcalc
