// SPDX-License-Identifier: Apache-2.0
// The memory plan against vLLM's own start-up figures.
#include <cmath>

#include "doctest.h"
#include "json/json_writer.h"
#include "kernels/gpu_spec.h"
#include "model_spec_fixtures.h"
#include "serving/engine_defaults.h"
#include "serving/memory.h"

namespace stepcalc {
namespace {

using fixtures::llama2_70b;

const GpuSpec& gpu(const char* name) {
  const GpuSpec* g = find_gpu_spec(name);
  REQUIRE(g != nullptr);
  return *g;
}

EngineSettings engine(int64_t batched_tokens, int64_t seqs) {
  EngineSettings e;
  e.max_num_batched_tokens = batched_tokens;
  e.max_num_seqs = seqs;
  return resolve_engine_settings(e, gpu("H100"));
}

TEST_CASE("Llama-2-70B TP4 on H100: within 2% of the 31,356 blocks vLLM 0.15.1 logged") {
  // data/calibration: kv.blocks_total_gpu = 31356 at max_num_batched_tokens 2048, max_num_seqs 128.
  const ServingMemory m = plan_memory(llama2_70b(), Precision{}, 4, gpu("H100"), engine(2048, 128));
  MESSAGE("kv_cache_blocks = " << m.kv_cache_blocks << ", weights " << m.weights_bytes / (1 << 30) << " GiB");
  CHECK(m.fits);
  CHECK(m.kv_bytes_per_token == 2 * 80 * 2 * 128 * 2);  // K and V, 2 KV heads per GPU, 16-bit
  CHECK(m.kv_cache_blocks == doctest::Approx(31356).epsilon(0.02));
  CHECK(m.kv_cache_tokens == m.kv_cache_blocks * 16);
  CHECK(m.weights_bytes == doctest::Approx(68.98e9 * 2 / 4).epsilon(0.005));
}

TEST_CASE("Llama-3.1-70B FP8 with an FP8 KV cache on one B200: vLLM's rule, figure by figure") {
  // vLLM 0.12-0.19 (gpu_worker.determine_available_memory): available = total x utilization
  // - weights - the profiling run's torch peak - the non-torch increase (none at TP 1);
  // blocks = available // (block_size x per-layer KV bytes of a token) // layers. Every
  // figure is derived here from the model's config.json, independently of plan_memory.
  const ModelSpec spec = fixtures::preset_spec("llama-3.1-70b-instruct");
  REQUIRE(spec.num_layers == 80);
  const double hidden = 8192, kv_dim = 8 * 128, ffn = 28672, vocab = 128256, layers = 80;
  // FP8 linear layers (1 byte per weight), 16-bit embedding, LM head and norms.
  const double linear = layers * (hidden * hidden * 2 + hidden * kv_dim * 2 + 3 * hidden * ffn);
  const double sixteen_bit = 2 * vocab * hidden + (2 * layers + 1) * hidden;
  const double weights = linear * 1 + sixteen_bit * 2;
  // The profiling forward over 8,192 tokens peaks in the MLP: input and residual
  // streams, gate_up output (2 x ffn) and its SiLU-and-mul (ffn), 16-bit each.
  const double activations = (2 * hidden + 3 * ffn) * 8192 * 2;
  const double budget = 178.36 * 1024 * 1024 * 1024 * 0.9;
  const double kv_per_token = 2 * layers * kv_dim * 1;  // K and V, FP8
  const double page = 16 * kv_per_token / layers;       // one layer's block of 16 tokens
  const int64_t want = static_cast<int64_t>(std::floor(std::floor((budget - weights - activations) / page) / layers));

  Precision p;
  p.attention = p.mlp = WeightFormat::kFp8;
  p.kv_fp8 = true;
  const EngineSettings engine_b200 = resolve_engine_settings(EngineSettings{}, gpu("B200"));  // 8,192 tokens
  const ServingMemory m = plan_memory(spec, p, 1, gpu("B200"), engine_b200);
  CHECK(m.weights_bytes == doctest::Approx(weights).epsilon(1e-9));
  CHECK(m.activation_bytes == doctest::Approx(activations).epsilon(1e-9));
  CHECK(m.non_torch_bytes == 0);
  CHECK(m.kv_bytes_per_token == kv_per_token);
  CHECK(m.kv_cache_blocks == want);
  // 37,394 blocks, 598,304 tokens: room for 64 requests of 1,024 + 8,192 tokens even at
  // their longest (589,824), which a 16-bit cache, holding half, is not.
  CHECK(m.kv_cache_blocks == 37394);
  CHECK(m.kv_cache_tokens == want * 16);
  Precision bf16_kv = p;
  bf16_kv.kv_fp8 = false;
  const ServingMemory wide = plan_memory(spec, bf16_kv, 1, gpu("B200"), engine_b200);
  CHECK(std::abs(wide.kv_cache_blocks - want / 2) <= 1);
  MESSAGE("FP8 KV: " << m.kv_cache_blocks << " blocks; 16-bit KV: " << wide.kv_cache_blocks);
}

TEST_CASE("the reserves follow the engine settings; weights the TP") {
  const ServingMemory small = plan_memory(llama2_70b(), Precision{}, 4, gpu("H100"), engine(2048, 128));
  const ServingMemory large = plan_memory(llama2_70b(), Precision{}, 4, gpu("H100"), engine(16384, 1024));
  CHECK(large.activation_bytes > 4 * small.activation_bytes);
  CHECK(large.kv_cache_blocks < small.kv_cache_blocks);
  const ServingMemory tp8 = plan_memory(llama2_70b(), Precision{}, 8, gpu("H100"), engine(2048, 128));
  CHECK(tp8.weights_bytes == doctest::Approx(small.weights_bytes / 2).epsilon(0.001));
  // 8 KV heads over 8 GPUs: one each, so a token's KV per GPU halves too.
  CHECK(tp8.kv_bytes_per_token == small.kv_bytes_per_token / 2);
}

TEST_CASE("a model too large for its TP does not fit, and says so with the numbers") {
  const ServingMemory m = plan_memory(llama2_70b(), Precision{}, 1, gpu("H100"), engine(2048, 128));
  CHECK_FALSE(m.fits);
  CHECK(m.kv_cache_blocks == 0);
  const auto warnings = memory_warnings(m, 0);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].code == "model_does_not_fit");
  CHECK(warnings[0].message.find("TP 1 on H100") != std::string::npos);
  Precision fp8;
  fp8.attention = fp8.mlp = fp8.experts = WeightFormat::kFp8;
  const ServingMemory fp8_tp2 = plan_memory(llama2_70b(), fp8, 2, gpu("H100"), engine(2048, 128));
  CHECK(fp8_tp2.fits);
}

TEST_CASE("a step holding more KV than the cache gets a warning with the numbers") {
  const ServingMemory m = plan_memory(llama2_70b(), Precision{}, 4, gpu("H100"), engine(2048, 128));
  CHECK(memory_warnings(m, static_cast<double>(m.kv_cache_tokens)).empty());
  const auto over = memory_warnings(m, static_cast<double>(m.kv_cache_tokens) + 1);
  REQUIRE(over.size() == 1);
  CHECK(over[0].code == "kv_cache_overflow");
  CHECK(over[0].message.find(std::to_string(m.kv_cache_blocks)) != std::string::npos);
}

TEST_CASE("MLA caches one latent per token, whole on every GPU") {
  ModelSpec s = llama2_70b();
  s.mla.kv_lora_rank = 512;
  s.mla.qk_rope_head_dim = 64;
  s.mla.qk_nope_head_dim = 128;
  s.mla.v_head_dim = 128;
  const ServingMemory m1 = plan_memory(s, Precision{}, 1, gpu("B200"), engine(2048, 128));
  const ServingMemory m4 = plan_memory(s, Precision{}, 4, gpu("B200"), engine(2048, 128));
  CHECK(m1.kv_bytes_per_token == 80 * (512 + 64) * 2);
  CHECK(m4.kv_bytes_per_token == m1.kv_bytes_per_token);
}

TEST_CASE("vLLM's default engine settings depend on the GPU's memory and name") {
  const EngineSettings none;
  const EngineSettings h100 = resolve_engine_settings(none, gpu("H100"));
  CHECK(h100.max_num_batched_tokens == 8192);
  CHECK(h100.max_num_seqs == 1024);
  CHECK(h100.gpu_memory_utilization == 0.9);
  CHECK(h100.block_size == 16);
  CHECK(resolve_engine_settings(none, gpu("B200")).max_num_seqs == 1024);
  CHECK(resolve_engine_settings(none, gpu("H200")).max_num_batched_tokens == 8192);
  CHECK(resolve_engine_settings(none, gpu("A100")).max_num_batched_tokens == 2048);  // 80 GB, but an A100
  CHECK(resolve_engine_settings(none, gpu("L40S")).max_num_seqs == 256);             // 48 GB
  EngineSettings odd = h100;
  odd.max_num_batched_tokens = 512;
  auto valid = validate_engine_settings(odd);
  REQUIRE_FALSE(valid.ok());
  CHECK(valid.error().path == "engine.max_num_batched_tokens");
}

}  // namespace
}  // namespace stepcalc

namespace stepcalc {
namespace {

TEST_CASE("messages format figures with fixed decimals, without printf") {
  CHECK(format_fixed(79.2249, 2) == "79.22");
  CHECK(format_fixed(0.899, 2) == "0.90");
  CHECK(format_fixed(-0.004, 2) == "0.00");
  CHECK(format_fixed(-1.5, 1) == "-1.5");
  CHECK(format_fixed(1234567, 0) == "1234567");
  CHECK(format_fixed(3.05, 3) == "3.050");
}

}  // namespace
}  // namespace stepcalc
