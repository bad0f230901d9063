// SPDX-License-Identifier: Apache-2.0
// Kimi delta attention (Kimi-Linear) in the measured mode: the config read and its bad fields, the
// KDA layers priced from the kda tables (fused decode, FlashKDA prefill) beside the MLA layers,
// the physics, refusals, the per-request state (float32 recurrence) and vLLM's hybrid allocator's
// block count by hand, and a serving run (docs/KERNELS.md, "Kimi delta attention").
#include <cmath>
#include <string>

#include "api/api.h"
#include "doctest.h"
#include "estimators/measured.h"
#include "kernel_test_support.h"
#include "kernels/kernel_registry.h"
#include "serving/memory.h"
#include "serving/serve.h"
#include "test_support.h"

namespace stepcalc {
namespace {

const char* const kModel = "kimi-linear-48b-a3b";

Request request_of(const std::string& gpu, int tp, const std::string& step, const std::string& extra = "") {
  return test::measured_request(kModel, gpu, tp, step, extra);
}

std::string decodes(int count, int64_t kv) { return test::decodes_json(count, kv); }

std::string prefill(int64_t tokens) { return test::prefill_json(tokens); }

std::shared_ptr<const KernelDb> db_of(const std::string& gpu) { return test::kernels_0240(gpu); }

MeasuredBreakdown priced(const MeasuredPlan& plan, const Step& step) {
  MeasuredBreakdown full;
  price_measured_full(plan, step, &full);
  return full;
}

double gpu_us(const std::string& gpu, int tp, const std::string& step, const std::string& extra = "") {
  const Request r = request_of(gpu, tp, step, extra);
  auto plan = plan_measured(r, db_of(gpu));
  REQUIRE_MESSAGE(plan.ok(), plan.error().message);
  return price_measured_summary(plan.value(), r.step).gpu_us;
}

/// The time of the named operator in a priced step (0 when absent).
double op_time(const MeasuredBreakdown& r, const MeasuredPlan& plan, const char* name) {
  double us = 0;
  for (const OperatorCost& c : r.operators)
    if (plan.ops.ops[static_cast<size_t>(c.op)].name == std::string(name)) us += c.us;
  return us;
}

TEST_CASE("Kimi-Linear's config: 20 KDA layers beside 7 MLA layers, 256 experts top-8 and a shared one") {
  auto m = model_preset(kModel);
  REQUIRE(m.ok());
  const ModelSpec& s = m->spec;
  CHECK(s.is_hybrid_linear());
  CHECK(s.linear.kda);
  CHECK(s.linear.num_layers == 20);  // kda_layers; full_attn_layers 4, 8, ..., 24, 27 are MLA
  CHECK(s.num_attention_layers() == 7);
  CHECK(s.linear.num_k_heads == 32);
  CHECK(s.linear.num_v_heads == 32);
  CHECK(s.linear.head_k_dim == 128);
  CHECK(s.linear.head_v_dim == 128);
  CHECK(s.linear.conv_kernel == 4);
  CHECK(s.linear.conv_dim() == 3 * 4096);  // q, k and v each through its short conv
  CHECK(s.is_mla());
  CHECK(s.mla.kv_lora_rank == 512);
  CHECK(s.mla.q_lora_rank == 0);
  CHECK(s.is_moe());
  CHECK(s.moe.num_experts == 256);
  CHECK(s.moe.top_k == 8);                   // num_experts_per_token
  CHECK(s.moe.shared_intermediate == 1024);  // num_shared_experts 1 x moe_intermediate_size
  CHECK(s.moe.num_moe_layers == 26);         // first_k_dense_replace 1
  CHECK(s.max_model_len == 1048576);
  // About 49 billion parameters (the model card's "48B").
  const double total = param_counts(s).total();
  CHECK(total > 48e9);
  CHECK(total < 50e9);
  // Bad fields name their path.
  const std::string base = R"("num_hidden_layers":4,"hidden_size":512,"num_attention_heads":8,)"
                           R"("torch_dtype":"bfloat16","kv_lora_rank":512,"qk_rope_head_dim":64,)";
  const auto kda = [&](const std::string& inside) { return base + R"("linear_attn_config":{)" + inside + "}"; };
  const std::string ok = R"("kda_layers":[1,2,3],"num_heads":8,"head_dim":128,"short_conv_kernel_size":4)";
  auto fine = parse_model_config("{" + kda(ok) + "}");
  REQUIRE_MESSAGE(fine.ok(), fine.error().message);
  CHECK(fine->spec.linear.num_layers == 3);
  CHECK(fine->spec.linear.kda);
  const auto bad = [&](const std::string& config, const char* code, const char* path) {
    auto e = parse_model_config("{" + config + "}");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().code == code);
    CHECK(e.error().path == path);
  };
  bad(kda(R"("kda_layers":[1],"head_dim":128,"short_conv_kernel_size":4)"), "missing_field",
      "model.linear_attn_config.num_heads");
  bad(kda(R"("kda_layers":[1],"num_heads":0,"head_dim":128,"short_conv_kernel_size":4)"), "invalid_value",
      "model.linear_attn_config.num_heads");
  bad(kda(R"("kda_layers":[1],"num_heads":8,"head_dim":"128","short_conv_kernel_size":4)"), "type_error",
      "model.linear_attn_config.head_dim");
  bad(kda(R"("num_heads":8,"head_dim":128,"short_conv_kernel_size":4)"), "missing_field",
      "model.linear_attn_config.kda_layers");
  bad(kda(R"("kda_layers":"1,2","num_heads":8,"head_dim":128,"short_conv_kernel_size":4)"), "type_error",
      "model.linear_attn_config.kda_layers");
  bad(kda(R"("kda_layers":[],"num_heads":8,"head_dim":128,"short_conv_kernel_size":4)"), "unsupported",
      "model.linear_attn_config.kda_layers");
  bad(kda(R"("kda_layers":[1,2,3,4],"num_heads":8,"head_dim":128,"short_conv_kernel_size":4)"), "unsupported",
      "model.linear_attn_config.kda_layers");
  bad(base + R"("linear_attn_config":[1])", "type_error", "model.linear_attn_config");
}

TEST_CASE("Kimi-Linear's KDA operators read the kda tables; MLA layers the MLA module tables") {
  const Request r = request_of("H200", 2, R"({"decode_requests": [{"progress_index": 1000}],
      "prefill_requests": [{"progress_index": 0, "num_new_prefill_tokens": 2048}]})");
  const MeasuredPlan plan = plan_measured(r, db_of("H200")).value();
  const MeasuredBreakdown res = priced(plan, r.step);
  bool decode = false, prefill_seen = false, conv = false;
  for (const OperatorCost& c : res.operators) {
    const Operator& op = plan.ops.ops[static_cast<size_t>(c.op)];
    if (std::string(op.name) == "kda_decode") {
      decode = true;
      CHECK(c.kernel.table == KernelTable::kKdaDecode);
      CHECK(c.kernel.how == LookupHow::kApproximated);  // 16 heads per GPU: the 12-head table, scaled
      CHECK(c.count == 20);
    }
    if (std::string(op.name) == "kda_prefill") {
      prefill_seen = true;
      CHECK(c.kernel.table == KernelTable::kKdaPrefill);
    }
    if (std::string(op.name) == "kda_conv1d_prefill") {
      conv = true;
      CHECK(c.kernel.table == KernelTable::kNone);
    }
  }
  CHECK(decode);
  CHECK(prefill_seen);
  CHECK(conv);
  CHECK(plan.attention_path == AttentionPath::kMlaModule);
  CHECK(std::isfinite(res.totals.gpu_us));
  CHECK(res.totals.gpu_us == price_measured_summary(plan, r.step).gpu_us);
  // At 16 heads per GPU the decode is the 12-head table's time x 16 / 12 (the recurrent state's size).
  GdnShape g;
  g.d_conv = 4, g.head_k_dim = 128, g.head_v_dim = 128, g.k_heads = 12, g.v_heads = 12, g.d_model = 7168;
  const double us12 = db_of("H200")->gdn(KernelTable::kKdaDecode, 1, 1, g).us;
  CHECK(op_time(res, plan, "kda_decode") == doctest::Approx(20 * us12 * 16 / 12));
}

TEST_CASE("KDA lookups: exact at table points, interpolated between, approximated off the heads") {
  const auto db = db_of("H200");
  GdnShape g;
  g.d_conv = 4, g.head_k_dim = 128, g.head_v_dim = 128, g.k_heads = 24, g.v_heads = 24, g.d_model = 7168;
  // bench_data/aic/h200/vllm-0.24.0/kda_decode.csv and kda_prefill.csv, 24 heads per GPU.
  const KernelTime d64 = db->gdn(KernelTable::kKdaDecode, 64, 1, g);
  CHECK(d64.how == LookupHow::kExact);
  CHECK(d64.us == 60.2);
  const KernelTime d128 = db->gdn(KernelTable::kKdaDecode, 128, 1, g);
  CHECK(d128.us == 116.0);
  const KernelTime d96 = db->gdn(KernelTable::kKdaDecode, 96, 1, g);
  CHECK(d96.how == LookupHow::kInterpolated);
  CHECK(d96.us == doctest::Approx((60.2 + 116.0) / 2));
  const KernelTime p = db->gdn(KernelTable::kKdaPrefill, 1, 8192, g);
  CHECK(p.how == LookupHow::kExact);
  CHECK(p.us == 642.0);
  CHECK(db->gdn(KernelTable::kKdaPrefill, 1, 6144, g).how == LookupHow::kInterpolated);
  CHECK(db->gdn(KernelTable::kKdaPrefill, 1, 1 << 20, g).how == LookupHow::kExtrapolated);
  // 32 heads (Kimi-Linear at TP 1): the nearest measured (24), scaled by 32 / 24.
  GdnShape k = g;
  k.k_heads = k.v_heads = 32;
  const KernelTime a = db->gdn(KernelTable::kKdaDecode, 64, 1, k);
  CHECK(a.how == LookupHow::kApproximated);
  CHECK(a.us == doctest::Approx(60.2 * 32 / 24));
  // Not loaded: NaN, marked missing.
  const auto gemm_only = test::load_kernels("H200", "vllm-0.24.0", {"gemm-bf16"});
  CHECK(gemm_only->gdn(KernelTable::kKdaDecode, 8, 1, g).how == LookupHow::kMissing);
}

TEST_CASE("Kimi-Linear physics: KDA grows with batch and tokens, not with context; FP8 never slower") {
  const auto kda_us = [](const std::string& step, const char* name, const std::string& extra = "") {
    const Request r = request_of("B200", 1, step, extra);
    const MeasuredPlan plan = plan_measured(r, db_of("B200")).value();
    return op_time(priced(plan, r.step), plan, name);
  };
  double last = 0;
  for (int batch : {1, 8, 64, 256}) {
    const double us = kda_us(decodes(batch, 4096), "kda_decode");
    CHECK(us >= last);
    last = us;
  }
  CHECK(kda_us(decodes(64, 4096), "kda_decode") == kda_us(decodes(64, 65536), "kda_decode"));
  last = 0;
  for (int tokens : {512, 2048, 8192, 32768}) {
    const double us = kda_us(prefill(tokens), "kda_prefill") + kda_us(prefill(tokens), "kda_conv1d_prefill");
    CHECK(us > last);
    last = us;
  }
  for (const std::string& step : {decodes(64, 4096), prefill(8192)}) {
    const double bf16 = gpu_us("H200", 2, step);
    const double fp8 = gpu_us("H200", 2, step, R"(, "quantization": "fp8")");
    CHECK(fp8 <= bf16);
  }
}

TEST_CASE("Kimi-Linear where the tables do not allow it: clear refusals") {
  // H200's vllm-0.14.0 and A100 measure no KDA; L40S (a probe revision of the collector) is not shipped.
  const Request old = test::request_or_fail(R"({"model": "kimi-linear-48b-a3b", "gpu": "H200", "tp": 2,
      "mode": "measured", "kernels": "vllm-0.14.0", "step": {"decode_requests": [{"progress_index": 10}]}})");
  auto refused = plan_measured(old, test::load_kernels("H200", "vllm-0.14.0"));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == "unsupported");
  CHECK(refused.error().path == "kernels");
  CHECK(refused.error().message.find("Kimi delta attention") != std::string::npos);
  CHECK(refused.error().message.find("H200 vllm-0.14.0") != std::string::npos);
  auto l40s = plan_measured(request_of("L40S", 2, decodes(1, 10)), test::load_kernels("L40S", "vllm-0.24.0"));
  REQUIRE_FALSE(l40s.ok());
  CHECK(l40s.error().code == "unsupported");
  // TP 64: 32 heads cannot be split.
  auto split = plan_measured(request_of("H200", 64, decodes(1, 10)), db_of("H200"));
  REQUIRE_FALSE(split.ok());
  CHECK(split.error().path == "tp");
  // The kda part not loaded: kernels_not_loaded naming it.
  auto partial = plan_measured(request_of("H200", 2, decodes(1, 10)),
                               test::load_kernels("H200", "vllm-0.24.0", {"gemm-bf16", "allreduce", "moe", "mla"}));
  REQUIRE_FALSE(partial.ok());
  CHECK(partial.error().code == "kernels_not_loaded");
  CHECK(partial.error().message.find("kda") != std::string::npos);
  // blis-v2 has no linear attention: refused at mode.
  auto ref = parse_request(R"({"model": "kimi-linear-48b-a3b", "tp": 2,
      "step": {"decode_requests": [{"progress_index": 10}]}})");
  REQUIRE_FALSE(ref.ok());
  CHECK(ref.error().path == "mode");
}

TEST_CASE("Kimi-Linear's state and hybrid cache by hand: H200 at TP 2, utilization 0.9") {
  const ModelSpec spec = model_preset(kModel)->spec;
  // Per KDA layer and request on one GPU: three conv states (q, k, v) of (4 - 1) x 4,096 / tp in
  // BF16, and the recurrent state 32 / tp x 128 x 128 in float32 (vLLM's kda_state_dtype).
  CHECK(linear_state_bytes_per_layer(spec, 1) == 3 * 3 * 4096 * 2.0 + 32 * 128 * 128 * 4.0);
  CHECK(linear_state_bytes_per_layer(spec, 2) == 3 * 3 * 2048 * 2.0 + 16 * 128 * 128 * 4.0);  // 1,085,440
  // KV per token: the latent (512 + 64, BF16) of the 7 MLA layers, on every GPU.
  const Precision p = precision_of(spec, WeightFormat::kBf16, KvCacheDtype::kAuto);
  CHECK(kv_bytes_per_token_per_gpu(spec, p, 2) == 7 * 576 * 2.0);
  // vLLM's hybrid allocator: the MLA block size is 64 x ceil(state / (64 x 1,152)) = 64 x 15 = 960;
  // pages of 960 x 1,152 bytes; 7 MLA and 20 KDA layers make groups of 7 (20 >= 1.25 x 7): one
  // attention group, three state groups; blocks = floor(floor(KV memory / page) / 7).
  const Request r = request_of("H200", 2, "{}", R"(, "engine": {"gpu_memory_utilization": 0.9})");
  auto mem = request_memory(r);
  REQUIRE_MESSAGE(mem.ok(), mem.error().message);
  const ServingMemory& m = mem.value();
  REQUIRE(m.fits);
  CHECK(m.state_bytes_per_layer == 1085440.0);
  CHECK(m.block_size == 960);
  CHECK(m.page_bytes == 960 * 1152.0);
  CHECK(m.kv_full_groups == 1);
  CHECK(m.kv_state_groups == 3);
  CHECK(m.state_bytes_per_request == 20 * 1085440.0);
  CHECK(m.kv_cache_blocks == static_cast<int64_t>(std::floor(std::floor(m.kv_cache_bytes / (960 * 1152.0)) / 7)));
  CHECK(m.kv_cache_tokens == m.kv_cache_blocks * 960);
  MESSAGE("Kimi-Linear H200 TP 2: " << m.kv_cache_blocks << " blocks of " << m.block_size << " tokens");
}

TEST_CASE("Kimi-Linear serves in measured on H200 and B200") {
  KernelRegistry kernels;
  test::add_default_packs(&kernels, "H200", true);
  test::add_default_packs(&kernels, "B200", true);
  for (const char* gpu : {"H200", "B200"}) {
    const Request r = test::request_or_fail(std::string(R"({"model": "kimi-linear-48b-a3b", "gpu": ")") + gpu +
                                            R"(", "tp": 2, "mode": "measured", "workload": {"input_tokens": 2000,
        "output_tokens": 100, "concurrency": 16, "num_requests": 32}})");
    auto served = run_serve(r, kernels);
    REQUIRE_MESSAGE(served.ok(), served.error().message);
    CHECK(served->num_requests == 32);
    CHECK(served->tpot_ms.mean > 0);
    CHECK(served->ttft_ms.mean > served->tpot_ms.mean);
    MESSAGE(std::string(gpu) << " TP 2: TTFT " << served->ttft_ms.mean << " ms, TPOT " << served->tpot_ms.mean
                             << " ms");
  }
}

}  // namespace
}  // namespace stepcalc
