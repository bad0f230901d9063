// SPDX-License-Identifier: Apache-2.0
#include "plan/plan_defaults.h"

namespace stepcalc {
namespace {

struct Price {
  const char* gpu;
  double usd;
};

// Mirrors presets/prices.json (tests/cli/plan.test.mjs checks they agree).
constexpr Price kPrices[] = {{"A100", 1.8},  {"B200", 5.0}, {"B300", 6.5}, {"B60", 0.6},  {"GB200", 6.0},
                             {"GB300", 7.5}, {"H100", 3.0}, {"H200", 3.8}, {"L40S", 1.0}, {"RTX-PRO-6000", 1.8}};

struct HfId {
  const char* preset;
  const char* repo;
};

constexpr HfId kHfIds[] = {
    {"codellama-34b-instruct-hf", "codellama/CodeLlama-34b-Instruct-hf"},
    {"deepseek-v2-lite", "deepseek-ai/DeepSeek-V2-Lite"},
    {"llama-2-70b-hf", "meta-llama/Llama-2-70b-hf"},
    {"llama-2-7b-hf", "meta-llama/Llama-2-7b-hf"},
    {"llama-3.1-70b-instruct", "meta-llama/Llama-3.1-70B-Instruct"},
    {"llama-3.1-8b-instruct", "meta-llama/Llama-3.1-8B-Instruct"},
    {"llama-4-scout-17b-16e-instruct-fp8-dynamic", "RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic"},
    {"mistral-nemo-instruct-2407", "mistralai/Mistral-Nemo-Instruct-2407"},
    {"mixtral-8x7b-v0.1", "mistralai/Mixtral-8x7B-v0.1"},
    {"qwen2.5-7b-instruct", "Qwen/Qwen2.5-7B-Instruct"},
    {"qwen3-14b", "Qwen/Qwen3-14B"},
    {"qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B"},
    {"qwen3-32b", "Qwen/Qwen3-32B"},
    {"yi-34b", "01-ai/Yi-34B"},
};

}  // namespace

const char* const kPlanPriceSource =
    "stepcalc's assumptions (presets/prices.json): round on-demand prices of one GPU-hour in the range GPU clouds "
    "listed in 2025, not a quote from any provider; edit them or pass gpu_hour_usd";

double default_gpu_hour_usd(std::string_view gpu) {
  for (const Price& p : kPrices)
    if (gpu == p.gpu) return p.usd;
  return 0;
}

std::string preset_hf_id(std::string_view preset) {
  for (const HfId& h : kHfIds)
    if (preset == h.preset) return h.repo;
  return "";
}

}  // namespace stepcalc
