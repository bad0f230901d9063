// SPDX-License-Identifier: Apache-2.0
// Expert-parallel and data-parallel layouts (issue 22; docs/SERVING.md, "Layouts"): what a
// request may ask, how the experts and the batch split, and what serving reports.
#include <memory>
#include <string>

#include "api/api.h"
#include "doctest.h"
#include "estimators/measured.h"
#include "io/request_json.h"
#include "kernel_test_support.h"
#include "ops/operators.h"
#include "serving/serve.h"
#include "test_support.h"

namespace stepcalc {
namespace {

const char* kMoe = "qwen3-30b-a3b";

Expected<Request> parse(const std::string& fields, const std::string& model = kMoe) {
  return parse_request(R"({"model": ")" + model + R"(", "gpu": "H100", )" + fields + R"(, "step": {}})");
}

const Operator* find(const OperatorList& list, const char* name) {
  for (const Operator& op : list.ops)
    if (std::string(op.name) == name) return &op;
  return nullptr;
}

/// One instance of operator `name` in `request`'s step, priced on `db` (-1: not in the list).
double op_us_each(const Request& request, const std::shared_ptr<const KernelDb>& db, const char* name) {
  auto plan = plan_measured(request, db);
  REQUIRE(plan.ok());
  MeasuredBreakdown full;
  price_measured_full(plan.value(), request.step, &full);
  for (const OperatorCost& c : full.operators)
    if (std::string(plan->ops.ops[static_cast<size_t>(c.op)].name) == name) return c.us_each;
  return -1;
}

}  // namespace

TEST_CASE("layouts: ep is 1 or tp x dp, only for MoE models, only in the measured mode") {
  REQUIRE(parse(R"("mode": "measured", "tp": 4, "ep": 4)").ok());
  REQUIRE(parse(R"("mode": "measured", "tp": 2, "dp": 2, "ep": 4)").ok());
  REQUIRE(parse(R"("mode": "measured", "tp": 1, "dp": 2)", "llama-3.1-8b-instruct").ok());  // dense replicas
  auto product = parse(R"("mode": "measured", "tp": 2, "dp": 2, "ep": 2)");
  REQUIRE_FALSE(product.ok());
  CHECK(product.error().code == "invalid_value");
  CHECK(product.error().path == "ep");
  CHECK(product.error().message.find("set ep to 4") != std::string::npos);
  auto dense = parse(R"("mode": "measured", "tp": 2, "ep": 2)", "llama-3.1-8b-instruct");
  REQUIRE_FALSE(dense.ok());
  CHECK(dense.error().path == "ep");
  // dp ranks without expert parallelism: vLLM slices the experts over tp x dp.
  REQUIRE(parse(R"("mode": "measured", "tp": 2, "dp": 2)").ok());
  // ... when the slices are whole columns: qwen3-30b-a3b's experts are 768 wide.
  auto thin = parse(R"("mode": "measured", "tp": 4, "dp": 256)");
  REQUIRE_FALSE(thin.ok());
  CHECK(thin.error().code == "invalid_value");
  CHECK(thin.error().path == "dp");
  CHECK(thin.error().message.find("ep = tp x dp") != std::string::npos);
  REQUIRE(parse(R"("mode": "measured", "tp": 4, "dp": 256, "ep": 1024)").ok());
  auto no_ep_reference = parse(R"("tp": 2, "dp": 2)");
  REQUIRE_FALSE(no_ep_reference.ok());
  CHECK(no_ep_reference.error().code == "unsupported");
  CHECK(no_ep_reference.error().path == "dp");
  auto reference = parse(R"("tp": 4, "ep": 4)");
  REQUIRE_FALSE(reference.ok());
  CHECK(reference.error().code == "unsupported");
  CHECK(reference.error().message.find("measured") != std::string::npos);
}

TEST_CASE("layouts: expert parallelism splits the experts whole; dp ranks' tokens meet at the experts") {
  const Request r = parse(R"("mode": "measured", "tp": 2)").value();
  const ModelSpec& s = r.model.spec;
  const Precision p = precision_of(s, WeightFormat::kBf16, KvCacheDtype::kAuto);
  const OperatorList tp4 = build_operator_list(s, p, 4);
  const OperatorList ep4 = build_operator_list(s, p, 4, 4, 1);
  const OperatorList dp2 = build_operator_list(s, p, 2, 4, 2);
  // The same expert bytes per GPU, split by expert instead of by slice.
  CHECK(find(ep4, "fused_moe")->weight_bytes == doctest::Approx(find(tp4, "fused_moe")->weight_bytes));
  CHECK(weight_bytes_per_gpu(s, p, 2, 4) < weight_bytes_per_gpu(s, p, 2));
  // Without dp the MoE output is all-reduced over TP; with dp the tokens of every rank are
  // dispatched over the ep GPUs and the fused MoE sees dp x the rank's rows.
  CHECK(find(ep4, "moe_all_reduce") != nullptr);
  REQUIRE(find(dp2, "moe_dispatch_combine") != nullptr);
  CHECK(find(dp2, "moe_all_reduce") == nullptr);
  CHECK(find(dp2, "moe_dispatch_combine")->group == 4);
  CHECK(find(dp2, "fused_moe")->row_scale == 2);
}

TEST_CASE("layouts: dp ranks without expert parallelism slice every expert over tp x dp GPUs") {
  const Request r = parse(R"("mode": "measured", "tp": 2)").value();
  const ModelSpec& s = r.model.spec;
  const Precision p = precision_of(s, WeightFormat::kBf16, KvCacheDtype::kAuto);
  const OperatorList tp4 = build_operator_list(s, p, 4);
  const OperatorList tp2 = build_operator_list(s, p, 2);
  const OperatorList dp2 = build_operator_list(s, p, 2, 1, 2);  // tp 2, dp 2, ep 1
  CHECK(expert_gpus(2, 1, 2) == 4);
  CHECK(expert_gpus(2, 4, 2) == 4);
  CHECK(expert_gpus(4, 1, 1) == 4);
  // Each GPU holds a quarter of every expert, as at TP 4; attention stays split by TP 2.
  CHECK(find(dp2, "fused_moe")->weight_bytes == doctest::Approx(find(tp4, "fused_moe")->weight_bytes));
  CHECK(find(dp2, "fused_moe")->row_bytes == doctest::Approx(find(tp4, "fused_moe")->row_bytes));
  CHECK(find(dp2, "qkv_proj")->n == doctest::Approx(find(tp2, "qkv_proj")->n));
  CHECK(dp2.weight_bytes_per_gpu < tp2.weight_bytes_per_gpu);
  CHECK(dp2.weight_bytes_per_gpu > tp4.weight_bytes_per_gpu);
  CHECK(dp2.weight_bytes_per_gpu == doctest::Approx(weight_bytes_per_gpu(s, p, 2, 4)));
  // Every rank's tokens meet at the experts, gathered and scattered over the 4 GPUs.
  REQUIRE(find(dp2, "moe_dispatch_combine") != nullptr);
  CHECK(find(dp2, "moe_dispatch_combine")->group == 4);
  CHECK(find(dp2, "fused_moe")->row_scale == 2);
  CHECK(find(dp2, "moe_all_reduce") == nullptr);
}

TEST_CASE("layouts: without expert parallelism the fused MoE reads the tp x dp row of the table") {
  auto db = test::load_kernels("H100", "vllm-0.24.0");
  Request dp2 = parse(R"("mode": "measured", "tp": 2, "dp": 2)").value();
  Request tp4 = parse(R"("mode": "measured", "tp": 4)").value();
  for (int i = 0; i < 32; ++i) dp2.step.decode.push_back({1024, 1});
  for (int i = 0; i < 64; ++i) tp4.step.decode.push_back({1024, 1});
  // Two ranks of 32 decodes: the experts see 64 tokens on the moe_tp 4 row, as TP 4's 64 do.
  const double moe = op_us_each(dp2, db, "fused_moe");
  CHECK(moe > 0);
  CHECK(moe == doctest::Approx(op_us_each(tp4, db, "fused_moe")));
  // The memory plan holds the sliced experts: more KV cache than TP 2 alone.
  const auto served = [&](const char* fields) {
    KernelRegistry kernels;
    test::add_default_packs(&kernels, "H100");
    auto req = test::request_or_fail(std::string(R"({"model": "qwen3-30b-a3b", "gpu": "H100", "mode": "measured", )") +
                                     fields +
                                     R"(, "workload": {"input_tokens": 256, "output_tokens": 16, "concurrency": 8}})");
    auto out = run_serve(req, kernels, nullptr);
    REQUIRE_MESSAGE(out.ok(), out.error().message);
    return out.value();
  };
  const auto alone = served(R"("tp": 2)");
  const auto ranks = served(R"("tp": 2, "dp": 2)");
  CHECK(ranks.memory.weights_bytes < alone.memory.weights_bytes);
  CHECK(ranks.memory.kv_cache_bytes > alone.memory.kv_cache_bytes);
}

TEST_CASE("layouts: a dispatch across nodes costs the fabric, not NVLink") {
  auto db = test::load_kernels("H100", "vllm-0.24.0");
  Request one = parse(R"("mode": "measured", "tp": 4, "dp": 2, "ep": 8)").value();
  Request two = parse(R"("mode": "measured", "tp": 4, "dp": 4, "ep": 16)").value();
  for (int i = 0; i < 64; ++i) one.step.decode.push_back({1024, 1});
  two.step = one.step;
  const double da = op_us_each(one, db, "moe_dispatch_combine"), db16 = op_us_each(two, db, "moe_dispatch_combine");
  MESSAGE("dispatch per layer: ep 8 (one node) " << da << " us, ep 16 (two nodes) " << db16 << " us");
  CHECK(da > 0);
  CHECK(db16 > 2 * da);  // twice the tokens, plus each GPU's share over the 50 GB/s fabric and its latency
}

TEST_CASE("layouts: dp ranks each serve their share; throughput and GPUs count every rank") {
  KernelRegistry kernels;
  test::add_default_packs(&kernels, "H100");
  const std::string w = R"("workload": {"input_tokens": 256, "output_tokens": 32, "concurrency": 8, "seed": 1})";
  auto one =
      test::request_or_fail(R"({"model": "llama-3.1-8b-instruct", "gpu": "H100", "mode": "measured", )" + w + "}");
  auto two = test::request_or_fail(
      R"({"model": "llama-3.1-8b-instruct", "gpu": "H100", "mode": "measured", "dp": 2, "workload": )"
      R"({"input_tokens": 256, "output_tokens": 32, "concurrency": 16, "seed": 1}})");
  auto a = run_serve(one, kernels, nullptr);
  auto b = run_serve(two, kernels, nullptr);
  REQUIRE_MESSAGE(a.ok(), a.error().message);
  REQUIRE_MESSAGE(b.ok(), b.error().message);
  // Two ranks of 8 clients each: the latencies of one rank of 8, twice the throughput.
  CHECK(b->ttft_ms.mean == doctest::Approx(a->ttft_ms.mean));
  CHECK(b->throughput.output_tokens_per_s == doctest::Approx(2 * a->throughput.output_tokens_per_s));
  CHECK(b->throughput.output_tokens_per_s_per_gpu == doctest::Approx(a->throughput.output_tokens_per_s_per_gpu));
}

}  // namespace stepcalc
