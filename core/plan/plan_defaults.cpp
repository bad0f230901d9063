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
    {"deepseek-r1", "deepseek-ai/DeepSeek-R1"},
    {"deepseek-v2-lite", "deepseek-ai/DeepSeek-V2-Lite"},
    {"deepseek-v3", "deepseek-ai/DeepSeek-V3"},
    {"gemma-3-27b-it", "google/gemma-3-27b-it"},
    {"gpt-oss-120b", "openai/gpt-oss-120b"},
    {"gpt-oss-20b", "openai/gpt-oss-20b"},
    {"kimi-k2.5", "moonshotai/Kimi-K2.5"},
    {"kimi-linear-48b-a3b", "moonshotai/Kimi-Linear-48B-A3B-Instruct"},
    {"llama-2-70b-hf", "meta-llama/Llama-2-70b-hf"},
    {"llama-2-7b-hf", "meta-llama/Llama-2-7b-hf"},
    {"llama-3.1-70b-instruct", "meta-llama/Llama-3.1-70B-Instruct"},
    {"llama-3.1-8b-instruct", "meta-llama/Llama-3.1-8B-Instruct"},
    {"llama-3.3-70b-instruct", "meta-llama/Llama-3.3-70B-Instruct"},
    {"llama-4-scout-17b-16e-instruct-fp8-dynamic", "RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic"},
    {"minimax-m2.5", "MiniMaxAI/MiniMax-M2.5"},
    {"mistral-nemo-instruct-2407", "mistralai/Mistral-Nemo-Instruct-2407"},
    {"mixtral-8x7b-v0.1", "mistralai/Mixtral-8x7B-v0.1"},
    {"qwen2.5-72b-instruct", "Qwen/Qwen2.5-72B-Instruct"},
    {"qwen2.5-7b-instruct", "Qwen/Qwen2.5-7B-Instruct"},
    {"qwen3-14b", "Qwen/Qwen3-14B"},
    {"qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B"},
    {"qwen3-235b-a22b-fp8", "Qwen/Qwen3-235B-A22B-FP8"},
    {"qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B"},
    {"qwen3-32b", "Qwen/Qwen3-32B"},
    {"qwen3-next-80b-a3b-instruct", "Qwen/Qwen3-Next-80B-A3B-Instruct"},
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
