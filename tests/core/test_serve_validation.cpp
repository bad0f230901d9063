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
  CHECK(same.subset->ttft_mape > 0);
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

TEST_CASE("a serving result carries its validation") {
  auto r = run_serve(serving(R"("gpu": "H100", "tp": 4, "mode": "corrected")"));
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  REQUIRE(r->validation.subset != nullptr);
  CHECK(r->validation.subset->tp == 4);
}

}  // namespace
}  // namespace stepcalc
