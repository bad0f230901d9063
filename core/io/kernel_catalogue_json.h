// SPDX-License-Identifier: Apache-2.0
// The GPUs and measured kernel tables as JSON, for the catalogue (presets) and the
// JavaScript loader: per GPU its constants and versions, per GPU and version the pack
// files with their sizes and what they cover (docs/KERNELS.md).
#pragma once

#include <string>

#include "base/error.h"
#include "json/json_writer.h"
#include "kernels/kernel_registry.h"

namespace stepcalc {

/// Writes an array value: one object per GPU (presets/gpus/) with its
/// constants, source, versions and default version.
void write_gpu_specs(JsonWriter& w);

/// Writes a "kernels" array value: one object per GPU and version built, with
/// {gpu, version, default, parts: [{name, file, bytes, gzip_bytes}], coverage: {...}}.
void write_kernel_sets(JsonWriter& w);

/// {"gpu": "H100", "version": "vllm-0.14.0", "part": "gemm-bf16"}
std::string loaded_pack_json(const LoadedPack& p);

}  // namespace stepcalc
