// SPDX-License-Identifier: Apache-2.0
// Serving results carry the accuracy ledger's subset nearest the request (docs/VALIDATION.md),
// compiled in from docs/validation.json, or say that no measured run is like it.
#include <cstring>
#include <string>

#include "doctest.h"
#include "serving/serve.h"
#include "serving/validation.h"
#include "test_support.h"

namespace stepcalc {
namespace {

Request serving(const std::string& fields) {
  return test::request_or_fail(R"({"model": "qwen3-32b", )" + fields +
                               R"(, "workload": {"input_tokens": 64, "output_tokens": 4, "concurrency": 1}})");
}

TEST_CASE("the nearest ledger subset: same GPU, precision and dense/MoE kind, nearest TP") {
  REQUIRE(embedded::kValidationSubsetCount > 0);
  const ValidationMatch same = nearest_validation(serving(R"("gpu": "H100", "tp": 4)"));
  REQUIRE(same.subset != nullptr);
  CHECK(std::string(same.subset->key) == "Qwen/Qwen3-32B | H100 | bf16 | TP4");
  CHECK(same.subset->runs > 0);
  CHECK(same.subset->ttft_mape() > 0);
  const ValidationMatch other_tp = nearest_validation(serving(R"("gpu": "H100", "tp": 8)"));
  REQUIRE(other_tp.subset != nullptr);
  CHECK(other_tp.subset->tp == 4);  // the only H100 BF16 dense subset
  // FP8 weights on H100: no priced subset is like it; nor is any A100 run.
  CHECK(nearest_validation(serving(R"("gpu": "H100", "tp": 4, "quantization": "fp8")")).subset == nullptr);
  CHECK(nearest_validation(serving(R"("gpu": "A100", "tp": 4)")).subset == nullptr);
  const ValidationMatch b200 = nearest_validation(serving(R"("gpu": "B200", "tp": 2, "quantization": "fp8")"));
  REQUIRE(b200.subset != nullptr);
  CHECK(std::strcmp(b200.subset->gpu, "B200") == 0);
  CHECK_FALSE(b200.subset->moe);
  CHECK(b200.subset->tp == 2);
}

Request serving_model(const std::string& model, const std::string& fields) {
  return test::request_or_fail(R"({"model": ")" + model + R"(", )" + fields +
                               R"(, "workload": {"input_tokens": 64, "output_tokens": 4, "concurrency": 1}})");
}

std::string key_of(const ValidationMatch& m) { return m.subset != nullptr ? m.subset->key : "(none)"; }

TEST_CASE("the nearest ledger subset has the request's own precision: FP4 and INT4 runs are not BF16 runs") {
  // gpt-oss-120b's experts are MXFP4: its own runs, not "no measured runs".
  CHECK(key_of(nearest_validation(serving_model("gpt-oss-120b", R"("gpu": "H100", "tp": 2)"))) ==
        "openai/gpt-oss-120b | H100 | mxfp4 | TP2");
  CHECK(key_of(nearest_validation(serving_model("llama-3.1-70b-instruct", R"("gpu": "B200", "tp": 4,
        "quantization": "nvfp4")"))) == "meta-llama/Llama-3.1-70B | B200 | nvfp4 | TP4");
  CHECK(key_of(nearest_validation(serving_model("kimi-k2.5", R"("gpu": "H200", "tp": 8)"))) ==
        "moonshotai/Kimi-K2.5 | H200 | int4_wo | TP8");
  // BF16 weights: no BF16 run on B200, and no BF16 MoE run on H100; the ledger's NVFP4,
  // MXFP4 and INT4 runs do not stand for them.
  CHECK(key_of(nearest_validation(serving_model("llama-3.1-70b-instruct", R"("gpu": "B200", "tp": 4)"))) == "(none)");
  CHECK(key_of(nearest_validation(serving_model("qwen3-30b-a3b", R"("gpu": "H100", "tp": 2)"))) == "(none)");
}

TEST_CASE("the nearest ledger subset has the request's kind of layout: data-parallel runs for data-parallel requests") {
  CHECK(key_of(nearest_validation(
            serving_model("minimax-m2.5", R"("mode": "measured", "gpu": "B200", "tp": 2, "ep": 4, "dp": 2)"))) ==
        "MiniMaxAI/MiniMax-M2.5 | B200 | fp8 | TP2 EP4 DP2");
  CHECK(key_of(nearest_validation(
            serving_model("minimax-m2.5", R"("mode": "measured", "gpu": "B200", "tp": 4, "ep": 16, "dp": 4)"))) ==
        "MiniMaxAI/MiniMax-M2.5 | B200 | fp8 | TP4 EP16 DP4");
  CHECK(key_of(nearest_validation(
            serving_model("minimax-m2.5", R"("mode": "measured", "gpu": "B200", "tp": 2, "ep": 2)"))) ==
        "MiniMaxAI/MiniMax-M2.5 | B200 | fp8 | TP2 EP2");
  CHECK(key_of(nearest_validation(serving_model("minimax-m2.5", R"("gpu": "B200", "tp": 2)"))) ==
        "MiniMaxAI/MiniMax-M2.5 | B200 | fp8 | TP2");
  // H200's data-parallel runs (Qwen3-235B-A22B-FP8, its experts sliced over TP x DP) are the
  // nearest for a data-parallel FP8 MoE request there; H200's one-engine runs are not.
  CHECK(key_of(nearest_validation(
            serving_model("minimax-m2.5", R"("mode": "measured", "gpu": "H200", "tp": 4, "ep": 8, "dp": 2)"))) ==
        "Qwen/Qwen3-235B-A22B-FP8 | H200 | fp8 | TP2 DP2");
  // No data-parallel run of a dense model: a dense request with dp ranks has none.
  CHECK(key_of(nearest_validation(
            serving_model("qwen3-32b", R"("mode": "measured", "gpu": "H100", "tp": 4, "dp": 2)"))) == "(none)");
}

TEST_CASE("a serving result carries its validation") {
  auto r = run_serve(serving(R"("gpu": "H100", "tp": 4, "mode": "corrected")"));
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  REQUIRE(r->validation.subset != nullptr);
  CHECK(r->validation.subset->tp == 4);
}

}  // namespace
}  // namespace stepcalc
