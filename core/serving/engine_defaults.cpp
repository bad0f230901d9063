// SPDX-License-Identifier: Apache-2.0
#include "serving/engine_defaults.h"

#include <cctype>
#include <cmath>

namespace stepcalc {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

bool is_a100(const GpuSpec& gpu) {
  std::string name;
  for (char c : gpu.name + " " + gpu.device) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name.find("a100") != std::string::npos;
}

}  // namespace

double cuda_visible_memory_bytes(const GpuSpec& gpu) {
  // Published vLLM start-up logs: "total_gpu_memory 79.22GiB" on an H100 80GB
  // (vllm-project/vllm PR #10511) and "Free memory on device (177.66/178.36 GiB)" on
  // a B200 (PR #21489); both 80 GiB and 180 GiB nominal in AIConfigurator's tables.
  if (gpu.name == "H100") return 79.22 * kGiB;
  if (gpu.name == "B200") return 178.36 * kGiB;
  constexpr double kVisibleShare = (79.22 / 80.0 + 178.36 / 180.0) / 2;
  return gpu.memory_bytes * kVisibleShare;
}

EngineSettings resolve_engine_settings(const EngineSettings& given, const GpuSpec& gpu) {
  EngineSettings s = given;
  // vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults (0.10-0.15): large
  // defaults for >= 70 GiB GPUs except A100 (PR #17885: larger budgets cost A100
  // throughput), for the OPENAI_API_SERVER usage context.
  const bool large = cuda_visible_memory_bytes(gpu) >= 70 * kGiB && !is_a100(gpu);
  if (s.max_num_batched_tokens == 0) s.max_num_batched_tokens = large ? 8192 : 2048;
  if (s.max_num_seqs == 0) s.max_num_seqs = large ? 1024 : 256;
  if (s.gpu_memory_utilization == 0) s.gpu_memory_utilization = kDefaultGpuMemoryUtilization;
  if (s.block_size == 0) s.block_size = kDefaultBlockSize;
  return s;
}

Expected<bool> validate_engine_settings(const EngineSettings& s) {
  if (!(s.gpu_memory_utilization > 0 && s.gpu_memory_utilization <= 1))
    return make_error("out_of_range", "engine.gpu_memory_utilization",
                      "gpu_memory_utilization must be in (0, 1] (vLLM's default is 0.9).");
  if (s.block_size != 1 && s.block_size != 8 && s.block_size != 16 && s.block_size != 32 && s.block_size != 64 &&
      s.block_size != 128)
    return make_error("out_of_range", "engine.block_size", "block_size must be one of 1, 8, 16, 32, 64, 128.");
  if (s.max_num_batched_tokens < s.max_num_seqs)
    return make_error("out_of_range", "engine.max_num_batched_tokens",
                      "max_num_batched_tokens (" + std::to_string(s.max_num_batched_tokens) +
                          ") must be at least max_num_seqs (" + std::to_string(s.max_num_seqs) +
                          "), as vLLM requires.");
  return true;
}

}  // namespace stepcalc
