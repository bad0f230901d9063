// SPDX-License-Identifier: Apache-2.0
// What both Wasm modules' bindings return (wasm/bindings.cpp, the first view's; and
// wasm/bindings_plan.cpp, the planner's, loaded on the first calc.plan): the JSON text or
// an error, and a JavaScript progress callback as the core's ServeProgress.
#pragma once

#include <emscripten/bind.h>

#include <string>

#include "api/api.h"

namespace stepcalc::wasm {

/// What every call returns: the JSON text, or an error (code, path, message).
struct Outcome {
  bool ok = false;
  std::string json;
  std::string code;
  std::string path;
  std::string message;
};

inline Outcome from(const Expected<std::string>& r) {
  Outcome out;
  out.ok = r.ok();
  if (r.ok()) {
    out.json = r.value();
  } else {
    out.code = r.error().code;
    out.path = r.error().path;
    out.message = r.error().message;
  }
  return out;
}

/// `progress` as the core's callback: called with the finished share (0..1), false from
/// JavaScript cancels. Anything but a function: no progress (nullptr). The function must
/// outlive the call it is given to.
inline ServeProgress progress_of(const emscripten::val& progress) {
  if (progress.typeOf().as<std::string>() != "function") return nullptr;
  return [&progress](double share) { return !progress(share).strictlyEquals(emscripten::val(false)); };
}

/// Registers Outcome with Embind (once per module, inside EMSCRIPTEN_BINDINGS).
inline void bind_outcome() {
  emscripten::value_object<Outcome>("Outcome")
      .field("ok", &Outcome::ok)
      .field("json", &Outcome::json)
      .field("code", &Outcome::code)
      .field("path", &Outcome::path)
      .field("message", &Outcome::message);
}

}  // namespace stepcalc::wasm
