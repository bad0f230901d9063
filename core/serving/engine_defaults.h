// SPDX-License-Identifier: Apache-2.0
// How `vllm serve` fills the engine settings a user leaves out, and what CUDA
// reports as a GPU's memory (the figure those defaults and the KV-cache budget
// start from). Rules of vLLM 0.12-0.15, sources in docs/SERVING.md.
#pragma once

#include <string>

#include "base/error.h"
#include "kernels/gpu_spec.h"
#include "request/workload.h"

namespace stepcalc {

/// vLLM's default `gpu_memory_utilization` and KV-cache block size.
constexpr double kDefaultGpuMemoryUtilization = 0.9;
constexpr int64_t kDefaultBlockSize = 16;

/// The GPU memory CUDA reports (`torch.cuda.mem_get_info()` total), which vLLM
/// multiplies by `gpu_memory_utilization`: below the nominal capacity by what the
/// driver keeps. H100 80GB: 79.22 GiB and B200: 178.36 GiB as vLLM logs them; the
/// other GPUs: nominal x 0.9906, the mean ratio of those two.
double cuda_visible_memory_bytes(const GpuSpec& gpu);

/// `settings` with every 0 replaced by vLLM's default for this GPU (OpenAI API
/// server): max_num_batched_tokens 8192 and max_num_seqs 1024 on GPUs whose CUDA
/// memory is at least 70 GiB and that are not A100s, else 2048 and 256;
/// gpu_memory_utilization 0.9; block size 16.
EngineSettings resolve_engine_settings(const EngineSettings& settings, const GpuSpec& gpu);

/// Checks resolved settings as vLLM does at start-up; the error names the field
/// (`engine.max_num_batched_tokens`, ...).
Expected<bool> validate_engine_settings(const EngineSettings& settings);

}  // namespace stepcalc
