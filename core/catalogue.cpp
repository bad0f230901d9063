// SPDX-License-Identifier: Apache-2.0
#include "catalogue.h"

#include "api.h"
#include "estimators/corrected_config.h"
#include "estimators/modes.h"
#include "input_limits.h"
#include "io/hardware_json.h"
#include "io/json_writer.h"
#include "io/kernel_catalogue_json.h"
#include "io/model_config.h"
#include "io/request_json.h"

namespace stepcalc {
namespace {

void write_modes(JsonWriter& w) {
  w.key("modes").begin_array();
  for (const ModeInfo& m : kModes)
    w.begin_object().field("name", m.name).field("description", m.description).end_object();
  w.end_array().field("default_mode", kDefaultMode);
}

void write_corrected(JsonWriter& w) {
  w.key("corrected").begin_object().key("switches").begin_array();
  for (const CorrectedSwitchInfo& s : kCorrectedSwitchInfo)
    w.begin_object().field("name", s.name).field("description", s.description).end_object();
  w.end_array().key("params").begin_array();
  for (const CorrectedParamInfo& p : kCorrectedParamInfo)
    w.begin_object()
        .field("name", p.name)
        .field("unit", p.unit)
        .field("default", p.default_value)
        .field("min", p.min)
        .field("max", p.max)
        .field("description", p.description)
        .end_object();
  w.end_array().end_object();
}

void write_sweep(JsonWriter& w) {
  w.key("sweep").begin_object().key("axes").begin_array();
  for (const SweepAxis& a : sweep_axes())
    w.begin_object().field("name", a.name).field("unit", a.unit).field("min", a.min).field("max", a.max).end_object();
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
  w.key("request_defaults")
      .begin_object()
      .field("gpu", defaults.hardware.gpu)
      .field("tp", defaults.tp)
      .field("mode", defaults.mode)
      .end_object();
  w.key("model_config").begin_object().key("shape_fields").begin_array();
  for (const char* f : model_shape_fields()) w.value(f);
  w.end_array().key("notes").begin_array();
  for (const ConfigNoteInfo& n : config_notes()) {
    w.begin_object().field("code", n.code).key("keys").begin_array();
    for (const char* k : n.keys) w.value(k);
    w.end_array().end_object();
  }
  w.end_array().end_object();
  w.key("dtypes").begin_array();
  for (const DtypeBytes& d : known_dtypes())
    w.begin_object().field("name", d.name).field("bytes_per_param", d.bytes_per_param).end_object();
  w.end_array();
}

void write_limits(JsonWriter& w) {
  namespace l = limits;
  w.key("limits")
      .begin_object()
      .field("document_bytes", static_cast<int64_t>(l::kMaxDocumentBytes))
      .field("json_depth", static_cast<int64_t>(l::kMaxJsonDepth))
      .field("config_depth", static_cast<int64_t>(l::kMaxConfigDepth))
      .field("requests_per_step", l::kMaxRequestsPerStep)
      .field("tokens", l::kMaxTokens)
      .field("layers", l::kMaxLayers)
      .field("hidden_size", l::kMaxHidden)
      .field("intermediate_size", l::kMaxIntermediate)
      .field("heads", l::kMaxHeads)
      .field("vocab_size", l::kMaxVocab)
      .field("tp", l::kMaxTp)
      .field("bytes_per_param", l::kMaxBytesPerParam)
      .field("tflops_peak_min", l::kMinTflopsPeak)
      .field("tflops_peak_max", l::kMaxTflopsPeak)
      .field("bw_peak_tbs_min", l::kMinBwPeakTBs)
      .field("bw_peak_tbs_max", l::kMaxBwPeakTBs)
      .field("per_layer_overhead_us_max", l::kMaxPerLayerOverheadUs)
      .field("string_bytes", static_cast<int64_t>(l::kMaxStringBytes))
      .field("tags", static_cast<int64_t>(l::kMaxTags))
      .field("batch", static_cast<int64_t>(l::kMaxBatch))
      .field("result_bytes", static_cast<int64_t>(l::kMaxResultBytes))
      .field("sweep_points", static_cast<int64_t>(l::kMaxSweepPoints))
      .field("sweep_requests", l::kMaxSweepRequests)
      .end_object();
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
