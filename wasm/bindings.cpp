// Embind bindings: the core's JSON API as plain value objects. Nothing crosses that
// the caller must delete; errors are values that the loader turns into StepCalcError.
#include <emscripten/bind.h>

#include <string>
#include <vector>

#include "api.h"
#include "catalogue.h"
#include "input_limits.h"
#include "io/kernel_catalogue_json.h"
#include "kernels/kernel_registry.h"

namespace {

/// What every call returns: the JSON text, or an error (code, path, message).
struct Outcome {
  bool ok = false;
  std::string json;
  std::string code;
  std::string path;
  std::string message;
};

Outcome from(const stepcalc::Expected<std::string>& r) {
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

/// The kernel packs this instance was given (loadKernels in the loader).
stepcalc::KernelRegistry& kernels() {
  static stepcalc::KernelRegistry registry;
  return registry;
}

Outcome price(const std::string& request_json) { return from(stepcalc::price_json(request_json, kernels())); }

Outcome price_document(const std::string& document_json, const std::string& mode) {
  auto priced = stepcalc::price_document(document_json, mode, kernels());
  return from(priced ? stepcalc::Expected<std::string>(priced->json) : stepcalc::Expected<std::string>(priced.error()));
}

Outcome sweep(const std::string& request_json, const std::string& axis, const emscripten::val& values) {
  return from(stepcalc::sweep_json(request_json, axis, emscripten::vecFromJSArray<double>(values), kernels()));
}

/// Adds one kernel pack (a Uint8Array: Embind copies its bytes into the string).
Outcome add_kernel_pack(const std::string& bytes) {
  auto added = kernels().add_pack(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return from(added ? stepcalc::Expected<std::string>(stepcalc::loaded_pack_json(added.value()))
                    : stepcalc::Expected<std::string>(added.error()));
}

/// A serving estimate (one request, or an array as serve_document). `progress` is
/// a JavaScript function called with the finished share (0..1) every few hundred
/// steps; it returns false to cancel. Anything but a function: no progress.
Outcome serve(const std::string& document_json, const std::string& mode, const emscripten::val& progress) {
  stepcalc::ServeProgress report = nullptr;
  if (progress.typeOf().as<std::string>() == "function")
    report = [&progress](double share) { return !progress(share).strictlyEquals(emscripten::val(false)); };
  auto served = stepcalc::serve_document(document_json, mode, kernels(), report);
  return from(served ? stepcalc::Expected<std::string>(served->json) : stepcalc::Expected<std::string>(served.error()));
}

std::string presets() { return stepcalc::presets_json(); }

/// The catalogue (limits, modes, axes, ...): the loader reads its limits once, so a
/// 1 GB string is refused in JavaScript, not after a copy.
std::string catalogue() { return stepcalc::catalogue_json(); }

Outcome resolve_model(const std::string& model_json) { return from(stepcalc::resolve_model_json(model_json)); }

std::string version() { return stepcalc::version(); }

}  // namespace

EMSCRIPTEN_BINDINGS(stepcalc) {
  emscripten::value_object<Outcome>("Outcome")
      .field("ok", &Outcome::ok)
      .field("json", &Outcome::json)
      .field("code", &Outcome::code)
      .field("path", &Outcome::path)
      .field("message", &Outcome::message);
  emscripten::function("price", &price);
  emscripten::function("priceDocument", &price_document);
  emscripten::function("sweep", &sweep);
  emscripten::function("serve", &serve);
  emscripten::function("presets", &presets);
  emscripten::function("addKernelPack", &add_kernel_pack);
  emscripten::function("catalogue", &catalogue);
  emscripten::function("resolveModel", &resolve_model);
  emscripten::function("version", &version);
}
