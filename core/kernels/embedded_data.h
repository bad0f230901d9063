// SPDX-License-Identifier: Apache-2.0
// Data compiled into the core by tools/pack-tables.mjs (build time, never by hand).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/gpu_spec.h"

namespace stepcalc::embedded {

extern const uint8_t kTablesBlob[];
extern const size_t kTablesBlobSize;
extern const size_t kTablesCsvBytes;  ///< size of the CSV files the blob came from

/// A model preset: HF config.json text, minified.
struct PresetText {
  const char* name;
  const char* json;
};
extern const PresetText kModelPresets[];
extern const size_t kModelPresetCount;

/// A GPU preset (presets/gpus/<gpu>.json), fields as there; see GpuSpec for meanings. Its
/// `source` is only in kGpuPresetsJson (presets().gpu_specs): the core reads it nowhere.
struct GpuPresetData {
  const char* name;
  const char* device;
  const char* interconnect;
  GpuConstants constants;
  double nccl_mem_bytes[4];     ///< TP 1, 2, 4, 8
  const char* kernels;          ///< comma-separated versions, e.g. "vllm-0.14.0,vllm-0.24.0"
  const char* default_kernels;  ///< e.g. "vllm-0.14.0"
  const char* aic_system;       ///< AIConfigurator's system name, accepted as an alias ("b300_sxm")
  const char* kernels_from;     ///< no measured tables: the GPU whose tables are scaled to it ("H100")
};
extern const GpuPresetData kGpuPresets[];
extern const size_t kGpuPresetCount;
/// The same presets as a JSON array (the fields of presets().gpu_specs), written verbatim.
extern const char* const kGpuPresetsJson;

}  // namespace stepcalc::embedded
