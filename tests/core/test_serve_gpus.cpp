// SPDX-License-Identifier: Apache-2.0
// Serving on every GPU: each model preset on each of the five GPUs with measured
// kernels (the measured mode, the only one that prices GPUs other than the H100),
// at the smallest TP of 1, 2, 4, 8 whose memory plan fits.
#include <cmath>
#include <string>
#include <vector>

#include "doctest.h"
#include "io/model_config.h"
#include "kernel_test_support.h"
#include "kernels/kernel_registry.h"
#include "serving/serve.h"

namespace stepcalc {
namespace {

const std::vector<std::string> kGpus = {"H100", "H200", "B200", "A100", "L40S"};

/// Every pack of each GPU's default kernel version, decoded when first used.
KernelRegistry default_packs() {
  KernelRegistry r;
  for (const std::string& gpu : kGpus) test::add_default_packs(&r, gpu, true);
  return r;
}

Request serving_request(const std::string& model, const std::string& gpu, int tp) {
  return test::request_or_fail(R"({"model": ")" + model + R"(", "gpu": ")" + gpu + R"(", "tp": )" + std::to_string(tp) +
                               R"(, "mode": "measured", "workload": {"input_tokens": 512, "output_tokens": 32,
                                   "concurrency": 8, "num_requests": 16}})");
}

TEST_CASE("serve: every preset on every GPU, at the smallest TP that fits") {
  const KernelRegistry kernels = default_packs();
  int served = 0, unmeasured = 0;
  for (const std::string& model : model_preset_names()) {
    bool fits_on_b200 = false;
    for (const std::string& gpu : kGpus) {
      CAPTURE(model);
      CAPTURE(gpu);
      bool fitted = false;
      for (int tp : {1, 2, 4, 8}) {
        const Request request = serving_request(model, gpu, tp);
        auto result = run_serve(request, kernels);
        if (!result && result.error().code == "unsupported" && result.error().path == "quantization") {
          // The checkpoint's weight format (gpt-oss's MXFP4, Kimi's INT4, ...) is not measured on
          // this GPU's tables: refused at any TP, never priced as another precision.
          CHECK(result.error().message.find("not measured on " + gpu) != std::string::npos);
          fitted = true;
          ++unmeasured;
          break;
        }
        if (!result && result.error().code == "unsupported" && result.error().path == "kernels") {
          // Gated DeltaNet layers where the GPU's default tables measure no linear attention (A100),
          // DeepSeek sparse attention or Kimi delta attention where they measure none (A100, L40S,
          // RTX-PRO-6000, B60).
          CHECK(result.error().message.find("not measured on " + gpu) != std::string::npos);
          fitted = true;
          ++unmeasured;
          break;
        }
        if (!result) {
          // The other acceptable refusal: the memory plan, at the TP.
          CHECK_MESSAGE(result.error().code == "does_not_fit", result.error().path << ": " << result.error().message);
          CHECK(result.error().path == "tp");
          CHECK(result.error().message.find("does not fit at TP " + std::to_string(tp)) != std::string::npos);
          continue;
        }
        const ServeResult& r = result.value();
        CHECK(r.memory.fits);
        CHECK(r.memory.kv_cache_tokens >= 512 + 32);
        CHECK(r.num_requests == 16);
        CHECK((std::isfinite(r.ttft_ms.mean) && r.ttft_ms.mean > 0));
        CHECK((std::isfinite(r.tpot_ms.mean) && r.tpot_ms.mean > 0));
        CHECK(r.e2e_ms.mean > r.ttft_ms.mean);
        CHECK(r.throughput.output_tokens_per_s > 0);
        fitted = true;
        ++served;
        if (gpu == "B200") fits_on_b200 = true;
        break;
      }
      if (!fitted) {
        // Nowhere up to TP 8: the weights with the profiling run's activations and NCCL's
        // buffers leave no KV cache in vLLM's budget per GPU (Kimi-K2.5's 76.2 GB of weights
        // per H100 at TP 8 are just under its 76.6 GB budget), and the weights take most of it.
        auto memory = request_memory(serving_request(model, gpu, 8));
        REQUIRE(memory.ok());
        CHECK_FALSE(memory->fits);
        CHECK(memory->weights_bytes > 0.9 * memory->budget_bytes);
      }
    }
    CHECK_MESSAGE(fits_on_b200, model << " fits on no B200 node (TP <= 8)");
  }
  // Most pairs are served; only the largest checkpoints exceed a node of the smaller GPUs.
  const int pairs = static_cast<int>(model_preset_names().size() * kGpus.size());
  MESSAGE(served << " of " << pairs << " preset x GPU pairs served; " << unmeasured
                 << " in a format not measured there");
  CHECK(served >= pairs * 3 / 4);
}

TEST_CASE("serve: the pricing's step-independent warnings reach the serving result") {
  auto has = [](const ServeResult& r, const std::string& code) {
    for (const Warning& w : r.warnings)
      if (w.code == code) return true;
    return false;
  };
  auto reference = run_serve(test::request_or_fail(R"({"model": "qwen3-32b", "gpu": "L40S", "tp": 2,
      "workload": {"input_tokens": 512, "output_tokens": 32, "concurrency": 8, "num_requests": 16}})"));
  REQUIRE_MESSAGE(reference.ok(), reference.error().message);
  CHECK(has(reference.value(), "gpu_h100_tables"));
  auto h100 = run_serve(test::request_or_fail(R"({"model": "qwen3-32b", "tp": 2,
      "workload": {"input_tokens": 512, "output_tokens": 32, "concurrency": 8, "num_requests": 16}})"));
  REQUIRE(h100.ok());
  CHECK_FALSE(has(h100.value(), "gpu_h100_tables"));
  // A100 measures no FP8 KV cache: asked for one, the pricing says so, and so does the serving
  // result. Its fused-MoE table (power-law routing) prices Mixtral's experts.
  Request fp8_kv = serving_request("mixtral-8x7b-v0.1", "A100", 2);
  fp8_kv.kv_cache = KvCacheDtype::kFp8;
  auto a100 = run_serve(fp8_kv, default_packs());
  REQUIRE_MESSAGE(a100.ok(), a100.error().message);
  CHECK(has(a100.value(), "kv_fp8_not_measured"));
  CHECK_FALSE(has(a100.value(), "moe_approximated"));
}

}  // namespace
}  // namespace stepcalc
