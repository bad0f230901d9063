// SPDX-License-Identifier: Apache-2.0
#include "api/catalogue.h"

#include "api/api.h"
#include "base/input_limits.h"
#include "estimators/step_summary.h"
#include "io/hardware_json.h"
#include "io/kernel_catalogue_json.h"
#include "io/model_config.h"
#include "io/model_spec_config.h"
#include "io/request_json.h"
#include "json/json_writer.h"
#include "request/corrected_config.h"
#include "request/modes.h"

namespace stepcalc {
namespace {

/// Writes `field`: [{name, description}...], one object per entry of `infos`.
template <typename Info, size_t N>
void write_described(JsonWriter& w, const char* field, const Info (&infos)[N]) {
  w.key(field).begin_array();
  for (const Info& i : infos) w.object({{"name", i.name}, {"description", i.description}});
  w.end_array();
}

void write_modes(JsonWriter& w) {
  write_described(w, "modes", kModes);
  w.field("default_mode", mode_name(kDefaultMode));
  w.key("bounds").begin_array();
  for (const char* b : kStepBoundNames) w.value(b);
  w.end_array().key("hardware_fields").begin_array();
  for (const char* f : kHardwareFields) w.value(f);
  w.end_array();
}

void write_corrected(JsonWriter& w) {
  w.key("corrected").begin_object();
  write_described(w, "switches", kCorrectedSwitchInfo);
  w.key("params").begin_array();
  for (const CorrectedParamInfo& p : kCorrectedParamInfo)
    w.object({{"name", p.name},
              {"unit", p.unit},
              {"default", p.default_value},
              {"min", p.min},
              {"max", p.max},
              {"description", p.description}});
  w.end_array().end_object();
}

void write_sweep(JsonWriter& w) {
  w.key("sweep").begin_object().key("axes").begin_array();
  for (const SweepAxis& a : sweep_axes())
    w.object({{"name", a.name}, {"unit", a.unit}, {"min", a.min}, {"max", a.max}});
  w.end_array()
      .field("default_decode_kv", kSweepDefaultDecodeKv)
      .field("max_points", static_cast<int64_t>(limits::kMaxSweepPoints));
  w.end_object();
}

template <size_t N>
void write_choices(JsonWriter& w, const char* field, const RequestChoice (&choices)[N]) {
  w.key(field).begin_array();
  for (const RequestChoice& c : choices) w.value(c.value);
  w.end_array();
}

void write_request(JsonWriter& w) {
  w.key("request_fields").begin_array();
  for (const char* name : request_fields()) w.value(name);
  w.end_array();
  const Request defaults;
  w.key("request_choices").begin_object();
  write_choices(w, "quantization", kQuantizationChoices);
  write_choices(w, "kv_cache_dtype", kKvCacheDtypeChoices);
  w.end_object();
  w.object("request_defaults",
           {{"gpu", defaults.hardware.gpu}, {"tp", defaults.tp}, {"mode", mode_name(defaults.mode)}});
  w.key("model_config").begin_object().key("shape_fields").begin_array();
  for (const char* f : model_shape_fields()) w.value(f);
  w.end_array().key("notes").begin_array();
  for (const ConfigNoteInfo& n : config_notes()) {
    w.begin_object().field("code", n.code).key("keys").begin_array();
    for (const char* k : n.keys) w.value(k);
    w.end_array().end_object();
  }
  w.end_array().key("spec_keys").begin_object().key("merged").begin_array();
  for (const char* k : model_spec_keys().merged) w.value(k);
  w.end_array().key("top_only").begin_array();
  for (const char* k : model_spec_keys().top_only) w.value(k);
  w.end_array().end_object().end_object();
  w.key("dtypes").begin_array();
  for (const DtypeBytes& d : known_dtypes()) w.object({{"name", d.name}, {"bytes_per_param", d.bytes_per_param}});
  w.end_array();
}

void write_limits(JsonWriter& w) {
  namespace l = limits;
  w.object("limits", {{"document_bytes", static_cast<int64_t>(l::kMaxDocumentBytes)},
                      {"json_depth", static_cast<int64_t>(l::kMaxJsonDepth)},
                      {"config_depth", static_cast<int64_t>(l::kMaxConfigDepth)},
                      {"requests_per_step", l::kMaxRequestsPerStep},
                      {"tokens", l::kMaxTokens},
                      {"layers", l::kMaxLayers},
                      {"hidden_size", l::kMaxHidden},
                      {"intermediate_size", l::kMaxIntermediate},
                      {"heads", l::kMaxHeads},
                      {"vocab_size", l::kMaxVocab},
                      {"tp", l::kMaxTp},
                      {"bytes_per_param", l::kMaxBytesPerParam},
                      {"tflops_peak_min", l::kMinTflopsPeak},
                      {"tflops_peak_max", l::kMaxTflopsPeak},
                      {"bw_peak_tbs_min", l::kMinBwPeakTBs},
                      {"bw_peak_tbs_max", l::kMaxBwPeakTBs},
                      {"per_layer_overhead_us_max", l::kMaxPerLayerOverheadUs},
                      {"string_bytes", static_cast<int64_t>(l::kMaxStringBytes)},
                      {"tags", static_cast<int64_t>(l::kMaxTags)},
                      {"batch", static_cast<int64_t>(l::kMaxBatch)},
                      {"result_bytes", static_cast<int64_t>(l::kMaxResultBytes)},
                      {"sweep_points", static_cast<int64_t>(l::kMaxSweepPoints)},
                      {"sweep_requests", l::kMaxSweepRequests}});
}

}  // namespace

std::string catalogue_json() {
  JsonWriter w;
  w.begin_object().field("version", version());
  write_modes(w);
  write_corrected(w);
  write_sweep(w);
  write_request(w);
  w.key("gpus");
  write_gpu_presets(w);
  w.key("gpu_specs");
  write_gpu_specs(w);
  w.key("kernels");
  write_kernel_sets(w);
  write_limits(w);
  w.end_object();
  return w.take();
}

}  // namespace stepcalc
