// SPDX-License-Identifier: Apache-2.0
// KV-cache sizing of sliding-window models as vLLM's hybrid KV allocator does it (vLLM v1,
// docs/SERVING.md "Memory"): the layers form groups of equal size, a block holds one page
// of every layer of a group, and a request holds blocks in every group, a sliding group
// only those of its window. One test per family, each against the rule worked out here.
#include <cmath>
#include <string>

#include "api/api.h"
#include "doctest.h"
#include "kernel_test_support.h"
#include "serving/memory.h"
#include "serving/scheduler.h"
#include "serving/serve.h"
#include "test_support.h"

namespace stepcalc {
namespace {

/// The memory plan of `config_json` (a config.json text) on `gpu` at `tp`.
ServingMemory plan_of(const std::string& config_json, const char* gpu, int tp) {
  const Request r = test::request_or_fail(R"({"model": )" + config_json + R"(, "gpu": ")" + gpu + R"(", "tp": )" +
                                          std::to_string(tp) + R"(, "mode": "measured", "step": {}})");
  auto m = request_memory(r);
  REQUIRE_MESSAGE(m.ok(), m.error().message);
  return m.value();
}

/// The Llama-3.1-8B preset's config with `extra` fields added (and `layers` layers, when given).
std::string llama8b_with(const std::string& extra, int layers = 0) {
  std::string c = test::read_file("presets/models/llama-3.1-8b-instruct.json");
  if (layers > 0) {
    const std::string key = "\"num_hidden_layers\": 32";
    const size_t at = c.find(key);
    REQUIRE(at != std::string::npos);
    c.replace(at, key.size(), "\"num_hidden_layers\": " + std::to_string(layers));
  }
  const size_t brace = c.rfind('}');
  return c.substr(0, brace) + ", " + extra + "}";
}

TEST_CASE("gpt-oss-120b (18 sliding + 18 full layers): two groups of 18, twice the blocks of one group of 36") {
  // The config names no dtype (the checkpoint's MXFP4 experts are 16-bit elsewhere): given here.
  std::string config = test::read_file("data/silicon/model_configs/openai--gpt-oss-120b_config.json");
  config = config.substr(0, config.rfind('}')) + R"(, "torch_dtype": "bfloat16"})";
  const ServingMemory m = plan_of(config, "H100", 2);
  REQUIRE(m.fits);
  CHECK(m.kv_full_groups == 1);
  CHECK(m.kv_sliding_groups == 1);
  CHECK(m.kv_window_tokens == 128);
  // One layer's page: K and V of 16 tokens, 8 KV heads / TP 2 of 64 dims, 16-bit.
  const double page = 2 * 16 * (8 / 2) * 64 * 2;
  CHECK(m.kv_bytes_per_token * 16 / 36 == doctest::Approx(page));
  const int64_t want = static_cast<int64_t>(std::floor(std::floor(m.kv_cache_bytes / page) / 18));
  CHECK(m.kv_cache_blocks == want);
  CHECK(m.kv_cache_tokens == want * 16);  // one full-attention group
  // A request of 10,000 tokens decoding: 625 blocks of the full group, and of the sliding
  // group the window's 127 tokens before the new one and its own: 9 blocks.
  SimulationSettings s;
  s.kv_full_groups = m.kv_full_groups, s.kv_sliding_groups = m.kv_sliding_groups, s.window_tokens = 128;
  CHECK(request_kv_blocks(s, 10000, 0, 1) == 625 + 9);
  // A prefill chunk of 2,048 new tokens keeps the window before it and the chunk's blocks.
  CHECK(request_kv_blocks(s, 10000, 0, 2048) == 625 + (127 + 2048 + 15) / 16 + 1);
  // A short request holds no more sliding blocks than tokens.
  CHECK(request_kv_blocks(s, 40, 0, 40) == 3 + 3);
}

TEST_CASE("every layer sliding (Mistral-style sliding_window, no layer_types): one group, window blocks only") {
  const ServingMemory plain = plan_of(test::read_file("presets/models/llama-3.1-8b-instruct.json"), "H100", 1);
  const ServingMemory m = plan_of(llama8b_with(R"("sliding_window": 4096)"), "H100", 1);
  CHECK(m.kv_full_groups == 0);
  CHECK(m.kv_sliding_groups == 1);
  CHECK(m.kv_cache_blocks == plain.kv_cache_blocks);  // one group of all 32 layers either way
  CHECK(plain.kv_full_groups == 1);
  CHECK(plain.kv_sliding_groups == 0);
  SimulationSettings s;
  s.kv_full_groups = 0, s.kv_sliding_groups = 1, s.window_tokens = 4096;
  CHECK(request_kv_blocks(s, 100000, 0, 1) == 4096 / 16 + 1);
}

TEST_CASE("Gemma-style sliding_window_pattern 6 on 32 layers: 27 sliding, 5 full, groups of 5") {
  const ServingMemory m = plan_of(llama8b_with(R"("sliding_window": 1024, "sliding_window_pattern": 6)"), "H100", 1);
  // 32 - 32/6 = 27 sliding, 5 full: 27 >= 1.25 x 5, so groups of 5: 1 full, ceil(27/5) = 6 sliding.
  CHECK(m.kv_full_groups == 1);
  CHECK(m.kv_sliding_groups == 6);
  const double page = m.kv_bytes_per_token * 16 / 32;
  CHECK(m.kv_cache_blocks == static_cast<int64_t>(std::floor(std::floor(m.kv_cache_bytes / page) / 5)));
}

TEST_CASE("layer_types of 10 full and 12 sliding: under 1.25 x, one group size of 12 (less padding)") {
  std::string types = R"("layer_types": [)";
  for (int i = 0; i < 22; ++i)
    types += std::string(i ? "," : "") + (i < 10 ? "\"full_attention\"" : "\"sliding_attention\"");
  const ServingMemory m = plan_of(llama8b_with(R"("sliding_window": 512, )" + types + "]", 22), "H100", 1);
  CHECK(m.kv_full_groups == 1);
  CHECK(m.kv_sliding_groups == 1);
  const double page = m.kv_bytes_per_token * 16 / 22;
  CHECK(m.kv_cache_blocks == static_cast<int64_t>(std::floor(std::floor(m.kv_cache_bytes / page) / 12)));
}

TEST_CASE("the shipped presets keep their windows (the embedded config keeps layer_types and the pattern)") {
  // Gemma-3-27B: 62 layers, every 6th global: 10 full, 52 sliding of 1,024 tokens; 52 >= 1.25 x 10,
  // so groups of 10: one full group and ceil(52 / 10) = 6 sliding groups.
  const ServingMemory gemma = plan_of(R"("gemma-3-27b-it")", "H100", 1);
  CHECK(gemma.kv_full_groups == 1);
  CHECK(gemma.kv_sliding_groups == 6);
  CHECK(gemma.kv_window_tokens == 1024);
  const double page = gemma.kv_bytes_per_token * 16 / 62;
  CHECK(gemma.kv_cache_blocks == static_cast<int64_t>(std::floor(std::floor(gemma.kv_cache_bytes / page) / 10)));
  // gpt-oss-20b: 12 sliding + 12 full layers alternating (layer_types): one group of each.
  const ServingMemory oss = plan_of(R"("gpt-oss-20b")", "H100", 1);
  CHECK(oss.kv_full_groups == 1);
  CHECK(oss.kv_sliding_groups == 1);
  CHECK(oss.kv_window_tokens == 128);
  // Qwen2.5-72B names a window but turns it off (use_sliding_window false).
  const ServingMemory qwen = plan_of(R"("qwen2.5-72b-instruct")", "H100", 4);
  CHECK(qwen.kv_sliding_groups == 0);
}

TEST_CASE("use_sliding_window false (Qwen2-style): no window, full attention") {
  const ServingMemory m = plan_of(llama8b_with(R"("sliding_window": 4096, "use_sliding_window": false)"), "H100", 1);
  CHECK(m.kv_full_groups == 1);
  CHECK(m.kv_sliding_groups == 0);
}

TEST_CASE("measured: a sliding layer's attention reads only the window; below the window nothing changes") {
  KernelRegistry kernels;
  test::add_default_packs(&kernels, "H100", true);
  std::string config = test::read_file("data/silicon/model_configs/openai--gpt-oss-120b_config.json");
  config = config.substr(0, config.rfind('}')) + R"(, "torch_dtype": "bfloat16")";
  const auto step_us = [&](const std::string& extra, int64_t kv) {
    std::string decodes;
    for (int i = 0; i < 64; ++i)
      decodes += std::string(i ? "," : "") + R"({"progress_index": )" + std::to_string(kv) + "}";
    auto r = price_json(R"({"model": )" + config + extra + R"(}, "gpu": "H100", "tp": 4, "mode": "measured",
        "step": {"decode_requests": [)" +
                            decodes + "]}}",
                        kernels);
    REQUIRE_MESSAGE(r.ok(), r.error().message);
    const size_t at = r->find("\"step_time_us\":");
    REQUIRE(at != std::string::npos);
    return std::stod(r->substr(at + 15));
  };
  // Half the layers slide over 128 tokens: at a KV of 8,000 their attention is far cheaper.
  const double windowed = step_us("", 8000), full = step_us(R"(, "use_sliding_window": false)", 8000);
  CHECK(windowed < full);
  CHECK(step_us("", 100) == step_us(R"(, "use_sliding_window": false)", 100));  // inside the window: the same
  CHECK(step_us("", 8000) > step_us("", 1000));  // the full layers still grow with the context
}

}  // namespace
}  // namespace stepcalc
