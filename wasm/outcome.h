// SPDX-License-Identifier: Apache-2.0
// What both Wasm modules' bindings return (wasm/bindings.cpp, the first view's; and
// wasm/bindings_plan.cpp, the planner's, loaded on the first calc.plan): the JSON text or
// an error, and a JavaScript progress callback as the core's ServeProgress.
#pragma once

#include <emscripten/bind.h>

#include <string>
#include <utility>

#include "api/api.h"

namespace stepcalc::wasm {

/// What every call returns: the JSON text, or an error (code, path, message). The text
/// crosses as a Uint8Array view of its UTF-8 bytes in the module's memory (outcome_text),
/// valid until the next call into the module: the loader decodes it at once, in one
/// TextDecoder call (a std::string field crosses by a JavaScript loop over its bytes).
struct Outcome {
  bool ok = false;
  emscripten::val json = emscripten::val::null();
  std::string code;
  std::string path;
  std::string message;
};

/// The last outcome's JSON text (what Outcome::json views).
inline std::string& outcome_text() {
  static std::string text;
  return text;
}

inline Outcome from(Expected<std::string> r) {
  Outcome out;
  out.ok = r.ok();
  if (r.ok()) {
    std::string& text = outcome_text();
    text = std::move(r).value();
    out.json = emscripten::val(
        emscripten::typed_memory_view(text.size(), reinterpret_cast<const unsigned char*>(text.data())));
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
