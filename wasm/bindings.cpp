// SPDX-License-Identifier: Apache-2.0
// Embind bindings of the first-view module (wasm/dist/stepcalc-core.*): the core's JSON
// API as plain value objects. Nothing crosses that the caller must delete; errors are
// values that the loader turns into StepCalcError. Summaries cross as numbers: whole
// columns as typed-array copies, and a single summary through two small views the loader
// reads and writes (wasm/stepcalc.js). The planner is not here: it is a module of its own
// (wasm/bindings_plan.cpp), loaded on the first calc.plan, so the page's first view does
// not carry it.
#include <emscripten/bind.h>

#include <array>
#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "api/api.h"
#include "api/catalogue.h"
#include "api/pricing_session.h"
#include "base/input_limits.h"
#include "io/kernel_catalogue_json.h"
#include "io/request_json.h"
#include "json/json_writer.h"
#include "kernels/kernel_registry.h"
#include "outcome.h"

// The module's only printf was Embind's: built without RTTI, its __getTypeName (emscripten's
// system/lib/embind/bind.cpp; it names a type without a binding in an error message) writes
// the type's address with sprintf(str, "%p", ti), which the compiler made siprintf, and that
// brought musl's printf_core (3.0 KB of the first view, gzipped). This siprintf writes "%p" as
// emcc 3.1.6's musl does (lowercase hex without leading zeros after "0x"; a null pointer "0")
// and stops the module on any other format, so a new caller cannot be given a wrong text
// quietly (tests/wasm/module.test.mjs checks the names it writes).
extern "C" int siprintf(char* out, const char* format, ...) {
  if (std::strcmp(format, "%p") != 0) __builtin_trap();
  va_list args;
  va_start(args, format);
  const auto address = reinterpret_cast<uintptr_t>(va_arg(args, void*));
  va_end(args);
  char* p = out;
  if (address != 0) *p++ = '0', *p++ = 'x';
  int digits = 1;
  while (digits < static_cast<int>(2 * sizeof address) && (address >> 4 * digits) != 0) ++digits;
  while (digits > 0) *p++ = "0123456789abcdef"[(address >> 4 * --digits) & 15];
  *p = '\0';
  return static_cast<int>(p - out);
}

namespace {

using emscripten::val;
using stepcalc::wasm::from;
using stepcalc::wasm::Outcome;

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

/// The loader's detail option: 0 the request's own, 1 summary, 2 full.
std::optional<stepcalc::Detail> detail_of(int detail) {
  if (detail == 1) return stepcalc::Detail::kSummary;
  if (detail == 2) return stepcalc::Detail::kFull;
  return std::nullopt;
}

Outcome price_at(const std::string& request_json, int detail) {
  return from(stepcalc::price_json(request_json, kernels(), detail_of(detail)));
}

Outcome price_document_at(const std::string& document_json, const std::string& mode, int detail) {
  auto priced = stepcalc::price_document(document_json, mode, kernels(), detail_of(detail));
  return from(priced ? stepcalc::Expected<std::string>(priced->json) : stepcalc::Expected<std::string>(priced.error()));
}

template <typename T>
val copy_of(const std::vector<T>& column) {
  return val(emscripten::typed_memory_view(column.size(), column.data())).call<val>("slice");
}

/// Columns as {ok, step_time_us, ..., bound (Uint8Array), warnings (two Uint32Array
/// halves of the code bits), errors: [{index, code, path, message}]}, or the error.
val columns(const stepcalc::Expected<stepcalc::SummaryColumns>& c) {
  val out = val::object();
  out.set("ok", c.ok());
  if (!c) {
    out.set("code", c.error().code);
    out.set("path", c.error().path);
    out.set("message", c.error().message);
    return out;
  }
  out.set("step_time_us", copy_of(c->step_time_us));
  out.set("total_us", copy_of(c->total_us));
  out.set("prefill_s", copy_of(c->prefill_s));
  out.set("decode_s", copy_of(c->decode_s));
  out.set("overhead_us", copy_of(c->overhead_us));
  out.set("bound", copy_of(c->bound));
  std::vector<uint32_t> low(c->size()), high(c->size());
  for (size_t i = 0; i < c->size(); ++i)
    low[i] = static_cast<uint32_t>(c->warnings[i]), high[i] = static_cast<uint32_t>(c->warnings[i] >> 32);
  out.set("warnings_low", copy_of(low));
  out.set("warnings_high", copy_of(high));
  val errors = val::array();
  for (size_t i = 0; i < c->errors.size(); ++i) {
    val e = val::object();
    e.set("index", static_cast<double>(c->error_index[i]));
    e.set("code", c->errors[i].code);
    e.set("path", c->errors[i].path);
    e.set("message", c->errors[i].message);
    errors.call<void>("push", e);
  }
  out.set("errors", errors);
  return out;
}

val price_many(const std::string& document_json, const std::string& mode) {
  return columns(stepcalc::price_many(document_json, mode, kernels()));
}

val sweep_columns(const std::string& request_json, const std::string& axis, const val& values) {
  return columns(
      stepcalc::sweep_columns(request_json, axis, emscripten::convertJSArrayToNumberVector<double>(values), kernels()));
}

val sweep_2d(const std::string& request_json, const std::string& axis_x, const val& xs, const std::string& axis_y,
             const val& ys) {
  return columns(stepcalc::sweep_2d(request_json, axis_x, emscripten::convertJSArrayToNumberVector<double>(xs), axis_y,
                                    emscripten::convertJSArrayToNumberVector<double>(ys), kernels()));
}

// ---- One summary without JSON: the loader keeps a few prepared requests (their
// pricing inputs, parsed once from JSON with an empty step) in slots, writes a step's
// lengths into the step view and reads the summary from the result view.
constexpr int kSlots = 16;

struct FastPath {
  std::array<stepcalc::Request, kSlots> requests;
  std::vector<int32_t> step;       ///< prefill (progress, new tokens) pairs, then decode KV lengths
  std::array<double, 8> result{};  ///< step_time_us, total_us, prefill_s, decode_s, overhead_us, bound, codes low, high
  stepcalc::PricingSession session{stepcalc::embedded_h100_tables(), kernels()};
  int last_slot = -1;  ///< the slot priced last (the session's measured plan is its model's)
};

FastPath& fast() {
  static FastPath state;
  return state;
}

/// Parses `request_json` (a request with an empty step) into `slot`; the result JSON
/// holds its id (when given) and mode, for the loader's summary objects.
Outcome prepare(int slot, const std::string& request_json) {
  if (slot < 0 || slot >= kSlots) return from(stepcalc::make_error("invalid_value", "slot", "No such slot."));
  auto r = stepcalc::parse_request(request_json);
  if (!r) return from(r.error());
  fast().requests[slot] = std::move(r).value();
  fast().last_slot = -1;
  const stepcalc::Request& q = fast().requests[slot];
  stepcalc::JsonWriter w;
  w.begin_object();
  if (q.has_id) w.field("id", q.id);
  w.field("mode", stepcalc::mode_name(q.mode)).end_object();
  return from(w.take());
}

val step_view(int values) {
  std::vector<int32_t>& step = fast().step;
  if (step.size() < static_cast<size_t>(values)) step.resize(static_cast<size_t>(values));
  return val(emscripten::typed_memory_view(step.size(), step.data()));
}

val result_view() { return val(emscripten::typed_memory_view(fast().result.size(), fast().result.data())); }

/// The request of `slot` with the step in the step view (its decodes one token each), its
/// session told when the model changed; null for a bad slot.
stepcalc::Request* slot_request(int slot, int prefill_requests, int decode_requests) {
  if (slot < 0 || slot >= kSlots) return nullptr;
  FastPath& f = fast();
  stepcalc::Request& r = f.requests[slot];
  const int32_t* v = f.step.data();
  r.step.prefill.resize(static_cast<size_t>(prefill_requests));
  for (auto& p : r.step.prefill) p = {v[0], v[1]}, v += 2;
  r.step.decode.resize(static_cast<size_t>(decode_requests));
  for (auto& d : r.step.decode) d = {*v++, 1};
  if (slot != f.last_slot) f.session.new_model();
  f.last_slot = slot;
  return &r;
}

/// Prices the step in the step view against `slot`: 0 and the summary in the result
/// view, or 1 (the loader then asks the JSON path, which words the error).
int price_slot(int slot, int prefill_requests, int decode_requests) {
  stepcalc::Request* r = slot_request(slot, prefill_requests, decode_requests);
  if (r == nullptr) return 1;
  FastPath& f = fast();
  auto s = f.session.summary(*r);
  if (!s) return 1;
  f.result = {static_cast<double>(s->step_time_us),
              s->total_us,
              s->prefill_s,
              s->decode_s,
              s->overhead_us,
              static_cast<double>(s->bound),
              static_cast<double>(static_cast<uint32_t>(s->warnings.bits)),
              static_cast<double>(static_cast<uint32_t>(s->warnings.bits >> 32))};
  return 0;
}

/// The full result JSON of the step in the step view against `slot` (what price_json
/// writes for the same request, without reading the step's JSON), or an error: the
/// loader then asks the JSON path, which words it.
Outcome price_slot_full(int slot, int prefill_requests, int decode_requests) {
  stepcalc::Request* r = slot_request(slot, prefill_requests, decode_requests);
  if (r == nullptr) return from(stepcalc::make_error("invalid_value", "slot", "No such slot."));
  return from(stepcalc::price_parsed(&fast().session, *r, stepcalc::Detail::kFull));
}

/// Adds one kernel pack (a Uint8Array: Embind copies its bytes into the string).
Outcome add_kernel_pack(const std::string& bytes) {
  auto added = kernels().add_pack(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  fast().last_slot = -1;  // a measured plan made before may have lacked these tables
  return from(added ? stepcalc::Expected<std::string>(stepcalc::loaded_pack_json(added.value()))
                    : stepcalc::Expected<std::string>(added.error()));
}

/// A serving estimate (one request, or an array as serve_document). `progress` is
/// a JavaScript function called with the finished share (0..1) every few hundred
/// steps; it returns false to cancel. Anything but a function: no progress.
Outcome serve(const std::string& document_json, const std::string& mode, const emscripten::val& progress) {
  auto served = stepcalc::serve_document(document_json, mode, kernels(), stepcalc::wasm::progress_of(progress));
  return from(served ? stepcalc::Expected<std::string>(served->json) : stepcalc::Expected<std::string>(served.error()));
}

std::string presets() { return stepcalc::presets_json(); }

/// The catalogue (limits, modes, axes, ...): the loader reads its limits once, so a
/// 1 GB string is refused in JavaScript, not after a copy.
std::string catalogue() { return stepcalc::catalogue_json(); }

Outcome resolve_model(const std::string& model_json) { return from(stepcalc::resolve_model_json(model_json)); }

/// How many prepared requests the summary path keeps (the loader's slots).
int slot_count() { return kSlots; }
std::string version() { return stepcalc::version(); }

/// The kernel set a GPU name and version resolve to, with its pack files.
Outcome kernel_set(const std::string& gpu, const std::string& version) {
  return from(stepcalc::kernel_set_json(gpu, version));
}

}  // namespace

EMSCRIPTEN_BINDINGS(stepcalc) {
  stepcalc::wasm::bind_outcome();
  emscripten::function("slotCount", &slot_count);
  emscripten::function("price", &price);
  emscripten::function("priceDocument", &price_document);
  emscripten::function("sweep", &sweep);
  emscripten::function("serve", &serve);
  emscripten::function("priceAt", &price_at);
  emscripten::function("priceDocumentAt", &price_document_at);
  emscripten::function("priceMany", &price_many);
  emscripten::function("sweepColumns", &sweep_columns);
  emscripten::function("sweep2d", &sweep_2d);
  emscripten::function("prepare", &prepare);
  emscripten::function("stepView", &step_view);
  emscripten::function("resultView", &result_view);
  emscripten::function("priceSlot", &price_slot);
  emscripten::function("priceSlotFull", &price_slot_full);
  emscripten::function("presets", &presets);
  emscripten::function("addKernelPack", &add_kernel_pack);
  emscripten::function("kernelSet", &kernel_set);
  emscripten::function("catalogue", &catalogue);
  emscripten::function("resolveModel", &resolve_model);
  emscripten::function("version", &version);
}
