// SPDX-License-Identifier: Apache-2.0
// Gated DeltaNet (linear attention, Qwen3-Next) in the measured mode: the config read, the
// layer operators priced from the GDN tables with their provenance, the physics the tables
// must carry, the fixed per-request state, and vLLM's hybrid allocator's block count worked
// out by hand (docs/SERVING.md, "Memory"; docs/KERNELS.md, "Gated DeltaNet").
#include <cmath>
#include <string>

#include "api/api.h"
#include "doctest.h"
#include "estimators/measured.h"
#include "kernel_test_support.h"
#include "kernels/kernel_registry.h"
#include "serving/memory.h"
#include "serving/scheduler.h"
#include "serving/serve.h"
#include "test_support.h"

namespace stepcalc {
namespace {

const char* const kModel = "qwen3-next-80b-a3b-instruct";

Request request_of(const std::string& gpu, int tp, const std::string& step, const std::string& extra = "") {
  return test::measured_request(kModel, gpu, tp, step, extra);
}

std::string decodes(int count, int64_t kv) { return test::decodes_json(count, kv); }

std::string prefill(int64_t tokens, int64_t prefix = 0) { return test::prefill_json(tokens, prefix); }

std::shared_ptr<const KernelDb> db_of(const std::string& gpu) { return test::kernels_0240(gpu); }

MeasuredTotals totals(const std::string& gpu, int tp, const std::string& step) {
  const Request r = request_of(gpu, tp, step);
  auto plan = plan_measured(r, db_of(gpu));
  REQUIRE_MESSAGE(plan.ok(), plan.error().message);
  return price_measured_summary(plan.value(), r.step);
}

TEST_CASE("Qwen3-Next's config: 36 gated DeltaNet layers beside 12 gated full-attention layers") {
  auto m = model_preset(kModel);
  REQUIRE(m.ok());
  const ModelSpec& s = m->spec;
  CHECK(s.is_hybrid_linear());
  CHECK(s.linear.num_layers == 36);  // full_attention_interval 4: layers 3, 7, ..., 47 are full attention
  CHECK(s.num_attention_layers() == 12);
  CHECK(s.linear.num_k_heads == 16);
  CHECK(s.linear.num_v_heads == 32);
  CHECK(s.linear.head_k_dim == 128);
  CHECK(s.linear.head_v_dim == 128);
  CHECK(s.linear.conv_kernel == 4);
  CHECK(s.linear.conv_dim() == 8192);
  CHECK(s.attn_output_gate);
  CHECK(s.qk_norm);
  CHECK(s.head_dim == 256);
  CHECK(s.moe.num_experts == 512);
  CHECK(s.moe.top_k == 10);
  CHECK(s.moe.num_moe_layers == 48);
  CHECK(s.moe.shared_intermediate == 512);
  // Parameters, module by module (vocab 151,936 x hidden 2,048, untied):
  //   embedding + LM head               2 x 311,164,928
  //   12 gated attention layers         12 x (3 x 2,048 x 4,096 + 2 x 2,048 x 512) = 327,155,712
  //   36 DeltaNet layers                36 x (2,048 x 12,288 + 2,048 x 64 + 8,192 x 4 + 4,096 x 2,048 + 192)
  //   48 x 512 experts, shared expert   48 x (512 + 1) x 3 x 2,048 x 512; router 48 x 2,048 x 512
  //   norms                             2,048 x 97
  // = 79,674,286,848: the checkpoint's 79.67 B less the shared-expert gates and q/k norms
  // (104,448), which no operator prices.
  const ParamCounts c = param_counts(s);
  CHECK(c.total() == 79674286848.0);
  CHECK(c.attention == 327155712.0 + 36 * 33718464.0);
  // Without linear attention (blis-v2's view) the model is refused outside measured.
  auto blis = parse_request(R"({"model": "qwen3-next-80b-a3b-instruct", "tp": 4, "step": {}})");
  REQUIRE_FALSE(blis.ok());
  CHECK(blis.error().code == "unsupported");
  CHECK(blis.error().path == "mode");
  CHECK(blis.error().message.find("\"measured\"") != std::string::npos);
  auto corrected = parse_request(R"({"model": "qwen3-next-80b-a3b-instruct", "mode": "corrected", "step": {}})");
  REQUIRE_FALSE(corrected.ok());
  CHECK(corrected.error().path == "mode");
}

TEST_CASE("Qwen3-Next's DeltaNet operators: shapes per GPU, and each read from its GDN table") {
  const Request r = request_of("H100", 4, R"({"prefill_requests": [{"progress_index": 0,
      "num_new_prefill_tokens": 2048}], "decode_requests": [{"progress_index": 1000}, {"progress_index": 3000}]})");
  auto plan = plan_measured(r, db_of("H100"));
  REQUIRE_MESSAGE(plan.ok(), plan.error().message);
  const OperatorList& ops = plan->ops;
  CHECK(ops.num_linear_layers == 36);
  CHECK(ops.linear.k_heads == 4);  // 16 / TP 4
  CHECK(ops.linear.v_heads == 8);
  const auto find = [&](const char* name) -> const Operator& {
    for (const Operator& op : ops.ops)
      if (std::string(op.name) == name) return op;
    FAIL("no operator " << name);
    return ops.ops.front();
  };
  CHECK(find("in_proj_qkvz").n == 12288 / 4);
  CHECK(find("in_proj_qkvz").k == 2048);
  CHECK(find("in_proj_ba").n == 64 / 4);
  CHECK(find("out_proj").k == 4096 / 4);
  CHECK(find("qkv_proj").n == (4 + 4 + 2 * 1) * 256);  // query, its gate, K and V (2 KV heads replicated at TP 4)
  CHECK(ops.count(find("qkv_proj")) == 12);
  CHECK(ops.count(find("gdn_delta_rule_decode")) == 36);
  CHECK(ops.count(find("input_layernorm")) == 48);
  MeasuredBreakdown full;
  price_measured_full(plan.value(), r.step, &full);
  const MeasuredTotals summary = price_measured_summary(plan.value(), r.step);
  CHECK(full.totals.gpu_us == summary.gpu_us);
  CHECK(summary.prefill_us + summary.decode_us == doctest::Approx(summary.gpu_us).epsilon(1e-9));
  int gdn = 0;
  for (const OperatorCost& c : full.operators) {
    const Operator& op = ops.ops[static_cast<size_t>(c.op)];
    if (op.kind != OpKind::kLinearAttention) continue;
    ++gdn;
    CAPTURE(op.name);
    const KernelTable want = op.gdn_conv ? (op.gdn_prefill ? KernelTable::kGdnConvPrefill : KernelTable::kGdnConvDecode)
                                         : (op.gdn_prefill ? KernelTable::kGdnPrefill : KernelTable::kGdnDecode);
    CHECK(c.kernel.table == want);
    // Qwen3.5-35B-A3B's shape, split by TP 4: measured (a cell above a larger batch's: the envelope's)
    CHECK((c.kernel.how == LookupHow::kExact || c.kernel.how == LookupHow::kEnvelope));
    CHECK(c.kernel.cells[0] >= 0);
    CHECK(c.us > 0);
    CHECK(plan->db->describe(c.kernel).find("bench_data/aic/h100/vllm-0.24.0/gdn_") != std::string::npos);
  }
  CHECK(gdn == 4);  // conv1d and delta rule, decode and prefill
  // A decode-only step runs no prefill kernels (they are left out of the breakdown).
  const Request d = request_of("H100", 4, decodes(8, 1000));
  MeasuredBreakdown only;
  price_measured_full(plan_measured(d, db_of("H100")).value(), d.step, &only);
  int prefill_ops = 0;
  for (const OperatorCost& c : only.operators) prefill_ops += ops.ops[static_cast<size_t>(c.op)].gdn_prefill;
  CHECK(prefill_ops == 0);
}

TEST_CASE("Qwen3-Next physics: decode grows with the batch, not with the context; prefill with its length") {
  for (const char* gpu : {"H100", "B200"}) {
    CAPTURE(gpu);
    const int tp = 4;
    double last = 0;
    for (int batch : {1, 8, 64, 256}) {
      const double t = totals(gpu, tp, decodes(batch, 2000)).gpu_us;
      CHECK(t > last);
      last = t;
    }
    // The DeltaNet layers' decode cost does not grow with context (a fixed state); only the 12
    // full-attention layers read a longer KV cache.
    const auto gdn_decode_us = [&](int64_t kv) {
      const Request r = request_of(gpu, tp, decodes(32, kv));
      const MeasuredPlan plan = plan_measured(r, db_of(gpu)).value();
      MeasuredBreakdown full;
      price_measured_full(plan, r.step, &full);
      double us = 0;
      for (const OperatorCost& c : full.operators)
        if (std::string(plan.ops.ops[static_cast<size_t>(c.op)].name) == "gdn_delta_rule_decode") us += c.us;
      return us;
    };
    CHECK(gdn_decode_us(1000) > 0);
    CHECK(gdn_decode_us(1000) == gdn_decode_us(100000));
    last = 0;
    for (int64_t n : {256, 1024, 4096, 16384}) {
      const double t = totals(gpu, tp, prefill(n)).gpu_us;
      CHECK(t > last);
      last = t;
    }
    // A chunk after a cached prefix costs more than the same chunk alone (full attention reads the
    // prefix), never less.
    CHECK(totals(gpu, tp, prefill(2048, 30000)).gpu_us > totals(gpu, tp, prefill(2048)).gpu_us);
  }
}

TEST_CASE("Qwen3-Next's state per request: fixed, halved by TP 2, and held once per layer") {
  auto spec = model_preset(kModel)->spec;
  // Conv state (4 - 1) x 8,192 channels and recurrent state 32 x 128 x 128, 16-bit, per layer.
  CHECK(linear_state_bytes_per_layer(spec, 1) == (3 * 8192 + 32 * 128 * 128) * 2.0);
  CHECK(linear_state_bytes_per_layer(spec, 2) == linear_state_bytes_per_layer(spec, 1) / 2);
  CHECK(linear_state_bytes_per_layer(spec, 4) == linear_state_bytes_per_layer(spec, 1) / 4);
  // KV per token: only the 12 full-attention layers (2 KV heads of 256, K and V, 16-bit).
  const Precision p = precision_of(spec, WeightFormat::kBf16, KvCacheDtype::kAuto);
  CHECK(kv_bytes_per_token_per_gpu(spec, p, 1) == 2.0 * 12 * 2 * 256 * 2);
  CHECK(kv_bytes_per_token_per_gpu(spec, p, 2) == 2.0 * 12 * 1 * 256 * 2);
}

/// The memory plan of the preset on `gpu` at `tp` with `utilization` of the GPU's memory.
ServingMemory memory_of(const std::string& gpu, int tp, double utilization) {
  const Request r =
      request_of(gpu, tp, "{}", R"(, "engine": {"gpu_memory_utilization": )" + std::to_string(utilization) + "}");
  auto m = request_memory(r);
  REQUIRE_MESSAGE(m.ok(), m.error().message);
  return m.value();
}

TEST_CASE("vLLM's hybrid allocator, by hand: Qwen3-Next on H100 at TP 4 and on H200 at TP 2, utilization 0.9") {
  // vLLM (HybridAttentionMambaModelConfig, the hybrid KV-cache manager; docs/SERVING.md):
  //  1. a linear layer's page is one request's state: conv (d_conv - 1) x conv_dim / tp plus
  //     the recurrent v_heads / tp x 128 x 128, 16-bit;
  //  2. the attention block size is 16 x ceil(state page / (16 x one token's K and V in one layer));
  //  3. the state page is padded to block_size x that token size, so every page is equal;
  //  4. 12 full-attention and 36 linear layers make groups of min(12, 36) = 12 (36 >= 1.25 x 12):
  //     one attention group, three state groups;
  //  5. blocks = floor(floor(KV memory / page) / 12).
  {
    const ServingMemory m = memory_of("H100", 4, 0.9);
    REQUIRE(m.fits);
    const double state = (3.0 * 8192 / 4 + 8.0 * 128 * 128) * 2;  // 274,432 bytes
    const double token = 2.0 * 1 * 256 * 2;                       // 2 KV heads over TP 4: 1 replicated; 1,024 bytes
    CHECK(m.state_bytes_per_layer == state);
    CHECK(m.block_size == 16 * static_cast<int64_t>(std::ceil(state / (16 * token))));
    CHECK(m.block_size == 272);
    CHECK(m.page_bytes == 272 * token);  // 278,528 >= 274,432: the state page padded to it
    CHECK(m.kv_full_groups == 1);
    CHECK(m.kv_state_groups == 3);
    CHECK(m.state_bytes_per_request == 36 * state);
    CHECK(m.kv_cache_blocks == static_cast<int64_t>(std::floor(std::floor(m.kv_cache_bytes / 278528.0) / 12)));
    CHECK(m.kv_cache_tokens == m.kv_cache_blocks * 272);
    // The KV memory itself: 0.9 of the GPU's memory less the weights (BF16: embedding, LM head,
    // projections and experts split by TP; the 2 KV heads' K and V replicated, one per GPU; router
    // and norms whole), the profiling run's activations and NCCL's buffers.
    CHECK(m.budget_bytes == doctest::Approx(0.9 * m.gpu_memory_bytes));
    const double split = 2 * 311164928.0 + 12 * 3 * 2048 * 4096.0 + 36 * 33718464.0 + 48 * 513 * 3 * 2048 * 512.0;
    const double whole = 12 * 2 * 2048 * 256.0 + 48 * 2048 * 512.0 + 2048 * 97.0;
    CHECK(m.weights_bytes == doctest::Approx((split / 4 + whole) * 2).epsilon(1e-12));
    CHECK(m.kv_cache_bytes ==
          doctest::Approx(m.budget_bytes - m.weights_bytes - m.activation_bytes - m.non_torch_bytes).epsilon(1e-12));
    MESSAGE("H100 TP 4: " << m.kv_cache_blocks << " blocks of " << m.block_size << " tokens, "
                          << m.kv_cache_bytes / 1073741824.0 << " GiB");
  }
  {
    const ServingMemory m = memory_of("H200", 2, 0.9);
    REQUIRE(m.fits);
    const double state = (3.0 * 8192 / 2 + 16.0 * 128 * 128) * 2;  // 548,864 bytes
    CHECK(m.state_bytes_per_layer == state);
    CHECK(m.block_size == 544);  // 16 x ceil(548,864 / (16 x 1,024)) = 16 x 34
    CHECK(m.page_bytes == 544 * 1024.0);
    CHECK(m.kv_cache_blocks == static_cast<int64_t>(std::floor(std::floor(m.kv_cache_bytes / (544 * 1024.0)) / 12)));
    MESSAGE("H200 TP 2: " << m.kv_cache_blocks << " blocks of " << m.block_size << " tokens");
  }
  // One GPU (B200 TP 1): 2 KV heads, 2,048 bytes a token; 1,097,728 bytes of state -> 544 again.
  const ServingMemory b200 = memory_of("B200", 1, 0.9);
  CHECK(b200.block_size == 544);
  CHECK(b200.page_bytes == 544 * 2048.0);
  // A request holds ceil(tokens / block) attention blocks and one block in each state group.
  SimulationSettings s;
  s.block_size = 272, s.kv_full_groups = 1, s.kv_state_groups = 3;
  CHECK(request_kv_blocks(s, 1000, 0, 1000) == 4 + 3);
  CHECK(request_kv_blocks(s, 1, 0, 1) == 1 + 3);
  CHECK(request_kv_blocks(s, 0, 0, 0) == 0);
}

TEST_CASE("Qwen3-Next serving admits requests by the hybrid cache's blocks, state blocks included") {
  KernelRegistry kernels;
  test::add_default_packs(&kernels, "H200", true);
  const std::string workload = R"(, "workload": {"input_tokens": 2000, "output_tokens": 100, "concurrency": 32,
      "num_requests": 48})";
  // Choose the utilization that leaves 70 blocks: each request needs ceil(2,100 / 544) = 4 attention
  // blocks and 3 state blocks, so at most 10 run at once.
  const ServingMemory base = memory_of("H200", 2, 0.9);
  const double want = base.budget_bytes - base.kv_cache_bytes + (70 * 12 + 6) * base.page_bytes;
  const double utilization = want / base.gpu_memory_bytes;
  const Request r = test::request_or_fail(R"({"model": "qwen3-next-80b-a3b-instruct", "gpu": "H200", "tp": 2,
      "mode": "measured", "engine": {"gpu_memory_utilization": )" +
                                          std::to_string(utilization) + "}" + workload + "}");
  auto served = run_serve(r, kernels);
  REQUIRE_MESSAGE(served.ok(), served.error().message);
  CHECK(served->memory.kv_cache_blocks == 70);
  CHECK(served->trace.peak_kv_blocks_used <= 70);
  CHECK(served->trace.peak_running <= 10);
  CHECK(served->trace.peak_running >= 5);
  CHECK(served->num_requests == 48);
  CHECK(served->tpot_ms.mean > 0);
  // At vLLM's default utilization the same workload runs all 32 clients at once.
  const Request roomy = test::request_or_fail(R"({"model": "qwen3-next-80b-a3b-instruct", "gpu": "H200", "tp": 2,
      "mode": "measured")" + workload + "}");
  auto wide = run_serve(roomy, kernels);
  REQUIRE_MESSAGE(wide.ok(), wide.error().message);
  CHECK(wide->trace.peak_running == 32);
  CHECK(wide->ttft_ms.mean < served->ttft_ms.mean);
}

TEST_CASE("Qwen3-Next under the simulation's row-count memo: steps of equal rows but other requests") {
  // 7 decodes + chunks of 250 and 255 tokens, and 8 decodes + one chunk of 504: 9 sampled rows and
  // 512 tokens each, so the memo's key is the same; the DeltaNet kernels are not (batch 7 vs 8).
  const Request r = request_of("H100", 4, decodes(1, 1));
  const MeasuredPlan plan = plan_measured(r, db_of("H100")).value();
  Step a, b;
  for (int i = 0; i < 7; ++i) a.decode.push_back({1000, 1});
  a.prefill = {{0, 250}, {0, 255}};
  for (int i = 0; i < 8; ++i) b.decode.push_back({1000, 1});
  b.prefill = {{0, 504}};
  MeasuredRowsMemo memo;
  for (const Step* step : {&a, &b, &a, &b}) {
    const MeasuredTotals plain = price_measured_summary(plan, *step);
    const MeasuredTotals kept = price_measured_summary(plan, *step, &memo);
    CHECK(kept.gpu_us == plain.gpu_us);
    CHECK(kept.attention_us == plain.attention_us);
    CHECK(kept.decode_us == plain.decode_us);
  }
  CHECK(price_measured_summary(plan, a).attention_us != price_measured_summary(plan, b).attention_us);
}

TEST_CASE("Qwen3-Next where the GDN tables or the heads do not allow it: clear refusals") {
  // A100's only tables (vllm-0.14.0) measure no linear attention; nor do H100's vllm-0.14.0.
  const Request old = test::request_or_fail(R"({"model": "qwen3-next-80b-a3b-instruct", "gpu": "H100", "tp": 4,
      "mode": "measured", "kernels": "vllm-0.14.0", "step": {"decode_requests": [{"progress_index": 10}]}})");
  auto refused = plan_measured(old, test::load_kernels("H100", "vllm-0.14.0"));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == "unsupported");
  CHECK(refused.error().path == "kernels");
  CHECK(refused.error().message.find("H100 vllm-0.14.0") != std::string::npos);
  // TP 32: 16 key heads cannot be split.
  const Request wide = request_of("H100", 32, decodes(1, 10));
  auto split = plan_measured(wide, db_of("H100"));
  REQUIRE_FALSE(split.ok());
  CHECK(split.error().path == "tp");
  // The GDN part not loaded: kernels_not_loaded, never a NaN.
  const Request r = request_of("H100", 4, decodes(1, 10));
  auto partial =
      plan_measured(r, test::load_kernels("H100", "vllm-0.24.0", {"gemm-bf16", "attention-bf16", "allreduce", "moe"}));
  REQUIRE_FALSE(partial.ok());
  CHECK(partial.error().code == "kernels_not_loaded");
  CHECK(partial.error().message.find("gdn") != std::string::npos);
}

TEST_CASE("GDN lookups: exact on measured shapes, approximated and scaled off them, interpolated between") {
  const auto db = db_of("H100");
  GdnShape g;
  g.k_heads = 16, g.v_heads = 32, g.d_model = 2048;
  const KernelTime t1 = db->gdn(KernelTable::kGdnDecode, 64, 1, g);
  CHECK(t1.how == LookupHow::kExact);
  const KernelTime t2 = db->gdn(KernelTable::kGdnDecode, 128, 1, g);
  const KernelTime mid = db->gdn(KernelTable::kGdnDecode, 96, 1, g);
  CHECK(mid.how == LookupHow::kInterpolated);
  CHECK(mid.us == doctest::Approx((t1.us + t2.us) / 2));
  const KernelTime beyond = db->gdn(KernelTable::kGdnDecode, 4096, 1, g);
  CHECK(beyond.how == LookupHow::kExtrapolated);
  CHECK(beyond.us > db->gdn(KernelTable::kGdnDecode, 1024, 1, g).us);
  // A head size the tables do not measure: the nearest, scaled by the state, approximated.
  GdnShape big = g;
  big.head_v_dim = 256;
  const KernelTime scaled = db->gdn(KernelTable::kGdnDecode, 64, 1, big);
  CHECK(scaled.how == LookupHow::kApproximated);
  CHECK(scaled.us == doctest::Approx(2 * t1.us));
  // Prefill: bilinear in batch and tokens; a longer sequence costs more.
  const KernelTime p1 = db->gdn(KernelTable::kGdnPrefill, 1, 2048, g);
  const KernelTime p2 = db->gdn(KernelTable::kGdnPrefill, 1, 3000, g);
  CHECK(p1.how == LookupHow::kExact);
  CHECK(p2.how == LookupHow::kInterpolated);
  CHECK(p2.us > p1.us);
  CHECK(db->gdn(KernelTable::kGdnPrefill, 1, 100000, g).how == LookupHow::kExtrapolated);
  // Bad input: zeros give an empty time, never NaN; a table that is not loaded, NaN marked missing.
  GdnShape none;
  CHECK(db->gdn(KernelTable::kGdnDecode, 8, 1, none).us == 0);
  CHECK(db->gdn(KernelTable::kGdnDecode, 0, 1, g).us == 0);
  const auto gemm_only = test::load_kernels("H100", "vllm-0.24.0", {"gemm-bf16"});
  CHECK(gemm_only->gdn(KernelTable::kGdnDecode, 8, 1, g).how == LookupHow::kMissing);
}

}  // namespace
}  // namespace stepcalc
