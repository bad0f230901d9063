// SPDX-License-Identifier: Apache-2.0
// Embind bindings of the planner's module (wasm/dist/stepcalc-plan.*): the core with the
// planner (core/plan), built for speed, loaded by wasm/stepcalc.js on the first calc.plan.
// It has its own kernel registry: the loader gives it every pack the first-view module was
// given (calc.loadKernels, and plan's own loads of each candidate GPU's tables) before it plans.
#include <emscripten/bind.h>

#include <string>

#include "api/api.h"
#include "io/kernel_catalogue_json.h"
#include "kernels/kernel_registry.h"
#include "outcome.h"

namespace {

using stepcalc::wasm::from;
using stepcalc::wasm::Outcome;

stepcalc::KernelRegistry& kernels() {
  static stepcalc::KernelRegistry registry;
  return registry;
}

/// Adds one kernel pack (a Uint8Array: Embind copies its bytes into the string).
Outcome add_kernel_pack(const std::string& bytes) {
  auto added = kernels().add_pack(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return from(added ? stepcalc::Expected<std::string>(stepcalc::loaded_pack_json(added.value()))
                    : stepcalc::Expected<std::string>(added.error()));
}

/// A deployment plan (docs/PLAN.md); `progress` is called with the share of candidates
/// done and returns false to cancel.
Outcome plan(const std::string& request_json, const emscripten::val& progress) {
  return from(stepcalc::plan_json(request_json, kernels(), stepcalc::wasm::progress_of(progress)));
}

std::string version() { return stepcalc::version(); }

}  // namespace

EMSCRIPTEN_BINDINGS(stepcalc_plan) {
  stepcalc::wasm::bind_outcome();
  emscripten::function("addKernelPack", &add_kernel_pack);
  emscripten::function("plan", &plan);
  emscripten::function("version", &version);
}
