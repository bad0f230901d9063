// SPDX-License-Identifier: Apache-2.0
// The narrow interface between the scheduler simulation and step pricing: the
// simulator hands over one engine step (prefill chunks and decodes, as a `Step`)
// and gets its times back, thousands of times per simulation. Nothing else of the
// estimators is visible here, so a faster or different estimator (another mode,
// another GPU, a summary-only path) plugs in without touching the simulator.
#pragma once

#include <memory>
#include <vector>

#include "base/error.h"
#include "kernels/kernel_registry.h"
#include "kernels/reference/mfu_tables.h"
#include "request/request.h"

namespace stepcalc {

/// The times of one engine step, in microseconds.
struct StepTimes {
  double total_us = 0;    ///< the step's cycle: forward pass plus CPU overhead (what the clock advances by)
  double prefill_us = 0;  ///< hardware time of the prefill part (0 without prefill)
  double decode_us = 0;   ///< hardware time of the decode part (0 without decodes)
};

/// Prices engine steps. Implementations keep whatever they resolve once (model,
/// GPU, TP, mode) and must not allocate per call once warmed up.
class StepPricer {
 public:
  virtual ~StepPricer() = default;
  /// The times of `step`; an error (out of range, no tables) ends the simulation.
  virtual Expected<StepTimes> price(const Step& step) = 0;
  /// Warnings that hold for every step (the model's notes, tables of another GPU,
  /// approximations of the measured plan), for the serving result.
  virtual std::vector<Warning> notes() const = 0;
};

/// A pricer over the step estimators (`blis-v2`, `corrected`, ...) at summary
/// detail: `base`'s model, hardware, TP and mode; its step is ignored.
std::unique_ptr<StepPricer> make_estimator_pricer(const Request& base, const MfuTables& tables);

/// The pricer for `base`'s mode: the estimators' for blis-v2 and corrected, the
/// measured operator plan (its GPU's tables from `kernels`) for measured.
Expected<std::unique_ptr<StepPricer>> make_step_pricer(const Request& base, const KernelRegistry& kernels);

}  // namespace stepcalc
