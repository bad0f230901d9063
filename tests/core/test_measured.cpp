// SPDX-License-Identifier: Apache-2.0
// The `measured` mode on the real kernel packs: every preset on every GPU, and the
// physics the tables must carry (MoE, FP8, GPU generations, TP, per-request lengths).
#include <cmath>
#include <string>
#include <vector>

#include "doctest.h"
#include "estimators/measured.h"
#include "estimators/measured_attention.h"
#include "kernel_test_support.h"

namespace stepcalc {
namespace {

struct Gpu {
  const char* name;
  const char* version;
};
const Gpu kGpus[] = {{"H100", "vllm-0.14.0"},         {"H200", "vllm-0.14.0"},  {"B200", "vllm-0.24.0"},
                     {"A100", "vllm-0.14.0"},         {"L40S", "vllm-0.24.0"},  {"H100", "vllm-0.24.0"},
                     {"B300", "vllm-0.24.0"},         {"GB200", "vllm-0.24.0"}, {"GB300", "vllm-0.24.0"},
                     {"RTX-PRO-6000", "vllm-0.24.0"}, {"B60", "vllm-0.20.0"}};

std::shared_ptr<const KernelDb> db_of(const char* gpu, const char* version) {
  static std::vector<std::pair<std::string, std::shared_ptr<const KernelDb>>> cache;
  const std::string key = std::string(gpu) + version;
  for (const auto& [k, db] : cache)
    if (k == key) return db;
  cache.emplace_back(key, test::load_kernels(gpu, version));
  return cache.back().second;
}

std::shared_ptr<const KernelDb> h100() { return db_of("H100", "vllm-0.14.0"); }

Request request_of(const std::string& model, int64_t tp, Step step) {
  Request r = test::request_or_fail("{\"model\": \"" + model + "\", \"tp\": " + std::to_string(tp) +
                                    ", \"mode\": \"measured\", \"step\": {}}");
  r.step = std::move(step);
  return r;
}

Step decodes(int count, int64_t kv) {
  Step s;
  for (int i = 0; i < count; ++i) s.decode.push_back({kv, 1});
  return s;
}

MeasuredPlan plan_of(const Request& r, std::shared_ptr<const KernelDb> db) {
  auto plan = plan_measured(r, std::move(db));
  REQUIRE_MESSAGE(plan.ok(), plan.error().message);
  return plan.value();
}

MeasuredTotals totals(const Request& r, std::shared_ptr<const KernelDb> db = h100()) {
  return price_measured_summary(plan_of(r, std::move(db)), r.step);
}

}  // namespace

TEST_CASE("measured: every preset prices on every GPU, summary and full agree to the bit") {
  Step step;
  step.prefill = {{0, 700}, {3000, 512}};
  for (int64_t kv : {100, 900, 4000, 12000}) step.decode.push_back({kv, 1});
  for (const Gpu& gpu : kGpus) {
    for (const std::string& name : model_preset_names()) {
      CAPTURE(gpu.name);
      CAPTURE(name);
      const Request r = request_of(name, 1, step);
      auto planned = plan_measured(r, db_of(gpu.name, gpu.version));
      if (!planned && planned.error().code == "unsupported" && planned.error().path == "quantization") {
        // The checkpoint's format (gpt-oss's MXFP4 on vllm-0.14.0, ...) is not in these tables.
        CHECK(planned.error().message.find("not measured on " + std::string(gpu.name)) != std::string::npos);
        continue;
      }
      if ((r.model.spec.is_hybrid_linear() || r.model.spec.is_sparse_mla()) && !planned) {
        // Gated DeltaNet layers, or DeepSeek sparse attention, on a GPU and version without
        // their tables: refused.
        CHECK(planned.error().code == "unsupported");
        CHECK(planned.error().path == "kernels");
        CHECK(planned.error().message.find("not measured on " + std::string(gpu.name)) != std::string::npos);
        continue;
      }
      REQUIRE_MESSAGE(planned.ok(), planned.error().message);
      const MeasuredPlan plan = planned.value();
      const MeasuredTotals t = price_measured_summary(plan, r.step);
      MeasuredBreakdown full;
      price_measured_full(plan, r.step, &full);
      CHECK(std::isfinite(t.total_us));
      CHECK(t.gpu_us > 0);
      CHECK(full.totals.total_us == t.total_us);
      CHECK(full.totals.gpu_us == t.gpu_us);
      double sum = 0;
      for (const OperatorCost& c : full.operators) sum += c.us;
      CHECK(sum == doctest::Approx(t.gpu_us).epsilon(1e-12));
      CHECK(t.prefill_us + t.decode_us == doctest::Approx(t.gpu_us).epsilon(1e-9));
      bool has_moe = false;
      for (const Operator& op : plan.ops.ops) has_moe = has_moe || op.kind == OpKind::kMoe;
      CHECK(has_moe == r.model.spec.is_moe());
      if (r.model.spec.is_mla()) CHECK(plan.attention_path != AttentionPath::kStandard);
      if (r.model.spec.is_sparse_mla()) CHECK(plan.attention_path == AttentionPath::kMlaModule);
    }
  }
}

TEST_CASE("measured: MLA without MLA tables is approximated with a warning") {
  const Request r = request_of("deepseek-v2-lite", 1, decodes(8, 2000));
  const MeasuredPlan a100 = plan_of(r, db_of("A100", "vllm-0.14.0"));
  CHECK(a100.attention_path == AttentionPath::kMlaApproximated);
  bool warned = false;
  for (const Warning& w : a100.warnings) warned = warned || w.code == "mla_approximated";
  CHECK(warned);
  CHECK(plan_of(r, h100()).attention_path == AttentionPath::kMlaApproximated);  // 0.14.0 MLA tables unused
  CHECK(plan_of(r, db_of("B200", "vllm-0.24.0")).attention_path == AttentionPath::kMlaModule);
}

TEST_CASE("measured: Mixtral's decode step costs more than Llama-3.1-8B's at batch 64") {
  const double llama = totals(request_of("llama-3.1-8b-instruct", 1, decodes(64, 1024))).gpu_us;
  const double mixtral = totals(request_of("mixtral-8x7b-v0.1", 1, decodes(64, 1024))).gpu_us;
  CHECK(mixtral > 2 * llama);  // ~46B of expert weights read against ~8B
}

TEST_CASE("measured: FP8 weights make a weight-bound decode much faster than BF16") {
  Request bf16 = request_of("llama-3.1-70b-instruct", 1, decodes(1, 1024));
  Request fp8 = bf16;
  fp8.quantization = WeightFormat::kFp8;
  const double ratio = totals(bf16).gpu_us / totals(fp8).gpu_us;
  MESSAGE("Llama-3.1-70B TP1 batch 1, H100 vllm-0.14.0: BF16 / FP8 = " << ratio);
  // Half the weight bytes; the measured FP8 kernels stream them a little slower than BF16.
  CHECK(ratio > 1.5);
  CHECK(ratio < 2.1);
  // A real FP8 checkpoint (compressed-tensors, attention left in BF16) against its BF16 twin.
  Request scout = request_of("llama-4-scout-17b-16e-instruct-fp8-dynamic", 1, decodes(8, 1024));
  Request twin = scout;
  twin.model.spec.quant = QuantSpec{};
  CHECK(totals(twin).gpu_us / totals(scout).gpu_us > 1.3);
  const MeasuredPlan plan = plan_of(scout, h100());
  CHECK(plan.ops.weight_bytes_per_gpu < 0.6 * plan_of(twin, h100()).ops.weight_bytes_per_gpu);
}

TEST_CASE("measured: B200 beats H100 on a long prefill and A100 loses") {
  Step step;
  step.prefill = {{0, 16384}};
  const Request r = request_of("llama-3.1-8b-instruct", 1, step);
  const double h = totals(r, h100()).gpu_us;
  CHECK(totals(r, db_of("B200", "vllm-0.24.0")).gpu_us < 0.8 * h);
  CHECK(totals(r, db_of("A100", "vllm-0.14.0")).gpu_us > 1.5 * h);
}

TEST_CASE("measured: tensor-parallel all-reduces are zero at TP 1, 2 per layer + 1 above") {
  const Request tp1 = request_of("llama-3.1-70b-instruct", 1, decodes(16, 1000));
  const MeasuredTotals t1 = totals(tp1);
  CHECK(t1.comm_us == 0);
  const Request tp4 = request_of("llama-3.1-70b-instruct", 4, decodes(16, 1000));
  const MeasuredPlan plan = plan_of(tp4, h100());
  MeasuredBreakdown b;
  price_measured_full(plan, tp4.step, &b);
  double allreduces = 0, comm = 0;
  for (const OperatorCost& c : b.operators) {
    const Operator& op = plan.ops.ops[static_cast<size_t>(c.op)];
    if (op.kind == OpKind::kAllreduce) allreduces += c.count;
    if (op.kind == OpKind::kAllreduce || op.kind == OpKind::kGather) comm += c.us;
  }
  CHECK(allreduces == 161);
  CHECK(b.totals.comm_us == comm);
  // Each one from the measured all-reduce at 16 rows x 8192 bf16 values.
  CHECK(b.operators[1].us_each == h100()->allreduce(4, 16 * 8192).us);
}

TEST_CASE("measured: decode requests are priced at their own KV lengths") {
  // Llama-2-70B at TP 4 (16 heads, 2 KV heads per GPU), where the tables stay above the HBM floor.
  Step mixed;
  for (int i = 0; i < 16; ++i) mixed.decode.push_back({i % 2 == 0 ? 256 : 16384, 1});
  const Request r = request_of("llama-2-70b-hf", 4, mixed);
  const MeasuredPlan plan = plan_of(r, h100());
  AttentionCost split;
  const double own = attention_layer_us(plan, r.step, &split, true);
  const double mean = attention_layer_us(plan, decodes(16, (256 + 16384) / 2), nullptr);
  CHECK(std::fabs(own - mean) / mean > 1e-3);  // the kernel time is not linear in KV
  CHECK(split.lookups.size() == 2);
  // Each request pays its share of the batch kernel at its own length.
  const double shares =
      (8 * decode_kernel_us(plan, 16, 256, nullptr) + 8 * decode_kernel_us(plan, 16, 16384, nullptr)) / 16;
  CHECK(own == doctest::Approx(shares));
  // A uniform batch is exactly the measured kernel.
  const double uniform = attention_layer_us(plan, decodes(16, 4096), nullptr);
  CHECK(uniform ==
        doctest::Approx(h100()->decode_attention(16, 4096, 16, 2, 128, KernelDtype::kBf16).us).epsilon(1e-12));
}

TEST_CASE("measured: decode attention reads its KV from HBM, not from the tables' warm L2") {
  // Llama-3.1-8B at TP 1 holds 8 KV heads x 128 x 2 x 2 bytes = 4 KiB per token and
  // layer: 8 x 512 tokens are 16.8 MB, which fit in the H100's 50 MB L2.
  const Request r = request_of("llama-3.1-8b-instruct", 1, decodes(8, 511));
  const MeasuredPlan plan = plan_of(r, h100());
  const double table = h100()->decode_attention(8, 511, 32, 8, 128, KernelDtype::kBf16).us;
  const double bytes = 8 * 512 * plan.ops.attention.kv_bytes_per_token;
  const double floor = plan.constants.decode_fixed_us + bytes / plan.constants.hbm_bytes_per_s * 1e6;
  const double priced = attention_layer_us(plan, r.step, nullptr);
  CHECK(floor > table);  // the table read its 16.8 MB faster than the HBM delivers
  CHECK(priced == doctest::Approx(floor));
}

TEST_CASE("measured: a prefill chunk after a cached prefix costs between its own and the whole") {
  const Request r = request_of("llama-3.1-8b-instruct", 1, Step{});
  const MeasuredPlan plan = plan_of(r, h100());
  auto attention = [&](int64_t prefix, int64_t tokens) {
    Step s;
    s.prefill = {{prefix, tokens}};
    return attention_layer_us(plan, s, nullptr);
  };
  const double chunk = attention(7680, 512), alone = attention(0, 512), whole = attention(0, 8192);
  CHECK(chunk > alone);
  CHECK(chunk < whole);
  // Rows 7680..8192 are 12% of the causal work of 8192 rows.
  const double variable = whole - plan.constants.prefill_fixed_us;
  CHECK(chunk - plan.constants.prefill_fixed_us ==
        doctest::Approx(variable * 512 * (2 * 7680 + 512) / (8192.0 * 8192)));
  // A mixed step is one launch: its fixed cost is counted once.
  Step both = decodes(4, 1000);
  both.prefill = {{0, 512}};
  CHECK(attention_layer_us(plan, both, nullptr) < alone + attention_layer_us(plan, decodes(4, 1000), nullptr));
}

TEST_CASE("measured: batches are padded to vLLM's CUDA-graph sizes up to 512 tokens") {
  const std::pair<double, double> cases[] = {{1, 1},     {2, 2},     {3, 4},     {5, 8},     {33, 40},
                                             {248, 248}, {249, 256}, {257, 272}, {512, 512}, {513, 513}};
  for (const auto& [tokens, padded] : cases) CHECK(cuda_graph_tokens(tokens, 512) == padded);
  const MeasuredTotals t = totals(request_of("llama-3.1-8b-instruct", 1, decodes(33, 1000)));
  CHECK(t.padded_tokens == 40);
  CHECK(t.sampled == 33);
}

TEST_CASE("measured: clear errors for tables not loaded and heads that do not split") {
  const Request r = request_of("mixtral-8x7b-v0.1", 2, decodes(4, 100));
  auto partial = plan_measured(r, test::load_kernels("H100", "vllm-0.14.0", {"gemm-bf16", "attention-bf16"}));
  REQUIRE_FALSE(partial.ok());
  CHECK(partial.error().code == "kernels_not_loaded");
  CHECK(partial.error().message.find("allreduce") != std::string::npos);
  const std::vector<std::string> parts = measured_kernel_parts(r, *find_kernel_set("H100", "vllm-0.14.0"));
  CHECK(parts == std::vector<std::string>{"gemm-bf16", "attention-bf16", "allreduce", "moe"});
  auto odd = plan_measured(request_of("llama-3.1-8b-instruct", 3, decodes(1, 1)), h100());
  REQUIRE_FALSE(odd.ok());
  CHECK(odd.error().path == "tp");
}

TEST_CASE("measured: lookups merge per (phase, batch, length, prefix) in first-seen order, in linear time") {
  // 65,536 decodes at distinct KV lengths plus repeats: each length is one lookup. (A
  // scan of the list per request made this quadratic: 2.6 s natively, 18 s in Wasm.)
  Step step;
  for (int64_t i = 0; i < 65536; ++i) step.decode.push_back({1 + i % 60000, 1});
  step.prefill = {{0, 300}, {500, 200}, {0, 300}};
  const Request r = request_of("llama-3.1-8b-instruct", 1, step);
  const MeasuredPlan plan = plan_of(r, h100());
  MeasuredBreakdown full;
  price_measured_full(plan, r.step, &full);
  const std::vector<AttentionLookup>& l = full.attention.lookups;
  REQUIRE(l.size() == 60000 + 2);
  CHECK_FALSE(l[0].prefill);
  CHECK(l[0].length == 1);
  CHECK(l[0].count == 2);  // lengths 1..5536 appear twice
  CHECK(l[59999].length == 60000);
  CHECK(l[59999].count == 1);
  CHECK(l[60000].prefill);
  CHECK(l[60000].count == 2);  // the two (0, 300) chunks
  CHECK(l[60001].prefix == 500);
  CHECK(price_measured_summary(plan, r.step).total_us == full.totals.total_us);
}

TEST_CASE("measured: a GPU without tables of its own reads its sibling's, scaled by the datasheets") {
  struct Case {
    const char* gpu;
    const char* sibling;
    const char* version;
  };
  for (const Case& c : {Case{"H100-PCIe", "H100", "vllm-0.24.0"}, Case{"A100-PCIe", "A100", "vllm-0.14.0"},
                        Case{"A30", "A100", "vllm-0.14.0"}, Case{"L4", "L40S", "vllm-0.24.0"}}) {
    CAPTURE(c.gpu);
    const GpuSpec& self = *find_gpu_spec(c.gpu);
    const GpuSpec& sib = *find_gpu_spec(c.sibling);
    CHECK(self.kernels_from == c.sibling);
    const auto time = [&](const char* gpu, const std::string& model, int64_t tp, Step step, MeasuredPlan* out) {
      Request r = request_of(model, tp, std::move(step));
      r.hardware.gpu = gpu;
      *out = plan_of(r, db_of(c.sibling, c.version));
      return price_measured_summary(*out, r.step).gpu_us;
    };
    MeasuredPlan p, q;
    // A dense decode (memory-bound): slower by at most the HBM ratio, by more than half of it.
    const double mem = sib.hbm_bw_bytes_per_s / self.hbm_bw_bytes_per_s;
    double own = time(c.sibling, "llama-3.1-8b-instruct", 1, decodes(16, 2000), &p);
    double scaled = time(c.gpu, "llama-3.1-8b-instruct", 1, decodes(16, 2000), &q);
    CHECK(p.scaled_to == nullptr);
    REQUIRE(q.scaled_to == &self);
    bool warned = false;
    for (const Warning& w : q.warnings)
      warned = warned || (w.code == "gpu_tables_scaled" && w.message.find(c.sibling) != std::string::npos);
    CHECK(warned);
    CHECK(scaled / own <= mem * (1 + 1e-9));
    CHECK(scaled / own > 1 + (mem - 1) / 2);
    // A long prefill (compute-bound): slower by about the BF16 peak ratio, never more than the larger ratio.
    Step prefill;
    prefill.prefill = {{0, 8192}};
    own = time(c.sibling, "llama-3.1-8b-instruct", 1, prefill, &p);
    scaled = time(c.gpu, "llama-3.1-8b-instruct", 1, prefill, &q);
    const double compute = sib.bf16_tflops / self.bf16_tflops;
    CHECK(scaled / own >= std::min(compute, mem) * 0.9);
    CHECK(scaled / own <= std::max(compute, mem) * (1 + 1e-9));
    // A MoE decode prices too, and TP 2 pays the slower link.
    CHECK(time(c.gpu, "mixtral-8x7b-v0.1", 2, decodes(8, 1000), &q) >
          time(c.sibling, "mixtral-8x7b-v0.1", 2, decodes(8, 1000), &p));
  }
}

TEST_CASE("measured: the row-count memo of a simulation prices every step as without it") {
  // Steps that repeat their row counts at other KV lengths (attention must still follow
  // the KV), prefill chunks beside decodes, row counts that collide in the memo, decodes at
  // mixed KV lengths and beyond the tables; each step also as the full breakdown prices it
  // (one table lookup per decode, no row searched once). The batches change back and forth, so
  // the decode rows a simulation keeps by batch (DecodeRowCache: two, natively) are both hit and
  // replaced; gemma-3-27b-it prices two attention layers a step (sliding windows).
  for (const char* model : {"llama-3.1-8b-instruct", "mixtral-8x7b-v0.1", "gemma-3-27b-it"}) {
    const MeasuredPlan plan = plan_of(request_of(model, 2, decodes(1, 1)), h100());
    MeasuredRowsMemo memo;
    for (int round = 0; round < 3; ++round) {
      for (int batch : {1, 8, 64, 8, 1, 200, 64, 5, 9}) {
        for (int64_t kv : {int64_t{100}, int64_t{3000}, int64_t{9000}, int64_t{70000}}) {
          Step step = decodes(batch, kv + round);
          if (batch == 8) step.prefill.push_back({kv, 512});
          for (size_t i = 1; i < step.decode.size(); i += 2) step.decode[i].progress_index += 37 * i;
          const MeasuredTotals plain = price_measured_summary(plan, step);
          const MeasuredTotals kept = price_measured_summary(plan, step, &memo);
          MeasuredBreakdown full;
          price_measured_full(plan, step, &full);
          CHECK(full.totals.total_us == plain.total_us);
          CHECK(full.totals.attention_us == plain.attention_us);
          CAPTURE(model);
          CAPTURE(batch);
          CAPTURE(kv);
          CHECK(kept.total_us == plain.total_us);
          CHECK(kept.gpu_us == plain.gpu_us);
          CHECK(kept.decode_us == plain.decode_us);
          CHECK(kept.prefill_us == plain.prefill_us);
          CHECK(kept.gemm_us == plain.gemm_us);
          CHECK(kept.attention_us == plain.attention_us);
          CHECK(kept.moe_us == plain.moe_us);
          CHECK(kept.comm_us == plain.comm_us);
          CHECK(kept.elementwise_us == plain.elementwise_us);
        }
      }
    }
  }
}

}  // namespace stepcalc
