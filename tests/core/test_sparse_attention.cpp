// SPDX-License-Identifier: Apache-2.0
// DeepSeek sparse attention (DeepSeek-V3.2) in the measured mode: the config read, attention
// priced from the DSA module tables with their provenance, the physics the tables must carry
// (decode reads the indexer's top-k tokens, not the whole cache), refusals where no table
// measures it, the indexer's keys in the KV cache counted by hand, and the preset served
// (docs/MEASURED-MODE.md, "DeepSeek sparse attention"; docs/KERNELS.md, "DeepSeek sparse attention").
#include <cmath>
#include <string>

#include "api/api.h"
#include "doctest.h"
#include "estimators/measured.h"
#include "estimators/measured_result.h"
#include "io/model_config.h"
#include "kernel_test_support.h"
#include "kernels/kernel_catalogue.h"
#include "kernels/kernel_registry.h"
#include "serving/memory.h"
#include "serving/serve.h"
#include "test_support.h"

namespace stepcalc {
namespace {

const char* const kModel = "deepseek-v3.2";

Request request_of(const std::string& model, const std::string& gpu, int tp, const std::string& step,
                   const std::string& extra = "") {
  return test::measured_request(model, gpu, tp, step, extra);
}

std::string decodes(int count, int64_t kv) { return test::decodes_json(count, kv); }

std::string prefill(int64_t tokens, int64_t prefix = 0) { return test::prefill_json(tokens, prefix); }

std::shared_ptr<const KernelDb> db_of(const std::string& gpu) { return test::kernels_0240(gpu); }

MeasuredPlan plan_of(const std::string& model, const std::string& gpu, int tp) {
  auto plan = plan_measured(request_of(model, gpu, tp, "{}"), db_of(gpu));
  REQUIRE_MESSAGE(plan.ok(), plan.error().message);
  return plan.value();
}

/// Attention time of one step (all layers, us).
double attention_us(const std::string& model, const std::string& gpu, int tp, const std::string& step) {
  const Request r = request_of(model, gpu, tp, step);
  auto plan = plan_measured(r, db_of(gpu));
  REQUIRE_MESSAGE(plan.ok(), plan.error().message);
  return price_measured_summary(plan.value(), r.step).attention_us;
}

bool has_warning(const std::vector<Warning>& list, const char* code) {
  for (const Warning& w : list)
    if (w.code == code) return true;
  return false;
}

TEST_CASE("DeepSeek-V3.2's config: DeepSeek-V3's shape with the indexer; other indexers stay dense MLA") {
  auto m = model_preset(kModel);
  REQUIRE(m.ok());
  const ModelSpec& s = m->spec;
  CHECK(s.is_sparse_mla());
  CHECK(s.mla.index_topk == 2048);
  CHECK(s.mla.index_head_dim == 128);
  CHECK(s.mla.index_key_bytes == 128 + 4);  // FP8 values and one float scale per 128
  CHECK(s.num_layers == 61);
  CHECK(s.mla.kv_lora_rank == 512);
  CHECK(s.mla.qk_rope_head_dim == 64);
  CHECK(s.moe.num_experts == 256);
  CHECK(s.moe.top_k == 8);
  CHECK(s.moe.num_moe_layers == 58);  // first_k_dense_replace 3
  CHECK(s.quant.format == WeightFormat::kFp8Block);
  auto v3 = model_preset("deepseek-v3");
  REQUIRE(v3.ok());
  CHECK_FALSE(v3->spec.is_sparse_mla());
  // The same parameters as DeepSeek-V3 (the indexer's weights are not counted: docs/MEASURED-MODE.md).
  CHECK(param_counts(s).total() == param_counts(v3->spec).total());
  // GLM-5's indexer (GlmMoeDsa) is another shape than the tables measure: dense MLA, with the note.
  auto glm = model_preset("glm-5.2-fp8");
  REQUIRE(glm.ok());
  CHECK_FALSE(glm->spec.is_sparse_mla());
  CHECK(has_warning(glm->spec.notes, "sparse_attention_approximated"));
  // A deepseek_v32 config without the indexer's keys takes DeepSeek-V3.2's values.
  const std::string base =
      R"("model_type":"deepseek_v32","num_hidden_layers":4,"hidden_size":512,"num_attention_heads":8,)"
      R"("torch_dtype":"bfloat16","kv_lora_rank":512,"qk_rope_head_dim":64)";
  auto bare = parse_model_config("{" + base + "}");
  REQUIRE(bare.ok());
  CHECK(bare->spec.mla.index_topk == 2048);
  CHECK(bare->spec.mla.index_head_dim == 128);
  // Bad values name their field.
  const auto bad = [&](const std::string& extra, const char* code, const char* path) {
    auto e = parse_model_config("{" + base + "," + extra + "}");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().code == code);
    CHECK(e.error().path == path);
  };
  bad(R"("index_topk":-1)", "invalid_value", "model.index_topk");
  bad(R"("index_n_heads":"64")", "type_error", "model.index_n_heads");
  bad(R"("text_config":{"index_head_dim":-128})", "invalid_value", "model.text_config.index_head_dim");
}

TEST_CASE("DeepSeek-V3.2 in measured: attention read from the DSA module tables, with their cells") {
  const Request r = request_of(kModel, "H200", 8, R"({"prefill_requests": [{"progress_index": 0,
      "num_new_prefill_tokens": 2048}], "decode_requests": [{"progress_index": 1000}, {"progress_index": 30000}]})");
  auto plan = plan_measured(r, db_of("H200"));
  REQUIRE_MESSAGE(plan.ok(), plan.error().message);
  CHECK(plan->attention_path == AttentionPath::kMlaModule);  // the module path, read from the DSA tables
  CHECK(plan->attn_heads == 16);                             // 128 heads over TP 8
  CHECK(plan->ops.attention.topk == 2048);
  // The note that it is priced as dense MLA is gone where the DSA tables price it.
  CHECK_FALSE(has_warning(plan->warnings, "sparse_attention_approximated"));
  MeasuredBreakdown full;
  price_measured_full(plan.value(), r.step, &full);
  CHECK(full.totals.gpu_us == price_measured_summary(plan.value(), r.step).gpu_us);
  REQUIRE(full.attention.lookups.size() == 3);
  int prefill_lookups = 0;
  for (const AttentionLookup& l : full.attention.lookups) {
    CAPTURE(l.length);
    CHECK(l.kernel.table == (l.prefill ? KernelTable::kDsaPrefill : KernelTable::kDsaDecode));
    CHECK(l.kernel.cells[0] >= 0);
    const std::string where = plan->db->describe(l.kernel);
    CHECK(where.find(l.prefill ? "bench_data/aic/h200/vllm-0.24.0/dsa_prefill"
                               : "bench_data/aic/h200/vllm-0.24.0/dsa_decode") != std::string::npos);
    prefill_lookups += l.prefill;
  }
  CHECK(prefill_lookups == 1);
  CHECK(attention_config_name(plan.value(), true) == "dsa-16");
  CHECK_FALSE(has_warning(full.warnings, "sparse_attention_approximated"));
  // DeepSeek-V3 (dense MLA, the same shape) still reads the MLA tables.
  const MeasuredPlan v3 = plan_of("deepseek-v3", "H200", 8);
  CHECK(v3.attention_path == AttentionPath::kMlaModule);
  CHECK(v3.ops.attention.topk == 0);
  // Every kernel set with DSA tables has the MLA module tables the path needs.
  for (const KernelSet& k : kernel_sets())
    if (k.coverage.has_dsa) CHECK((k.coverage.has_mla && k.version != "vllm-0.14.0"));
  // The pack parts: "dsa" for V3.2 (not "mla"), never for V3.
  const KernelSet* set = find_kernel_set("H200", "vllm-0.24.0");
  REQUIRE(set != nullptr);
  CHECK(set->coverage.has_dsa);
  const auto parts = measured_kernel_parts(r, *set);
  CHECK(std::find(parts.begin(), parts.end(), "dsa") != parts.end());
  CHECK(std::find(parts.begin(), parts.end(), "mla") == parts.end());
  const auto v3_parts = measured_kernel_parts(request_of("deepseek-v3", "H200", 8, "{}"), *set);
  CHECK(std::find(v3_parts.begin(), v3_parts.end(), "dsa") == v3_parts.end());
  CHECK_FALSE(find_kernel_set("H200", "vllm-0.14.0")->coverage.has_dsa);
}

TEST_CASE("DeepSeek-V3.2's physics: decode grows weakly with the KV length beyond top-k, dense MLA does not") {
  for (const char* gpu : {"H200", "B200"}) {
    CAPTURE(gpu);
    const double sparse_short = attention_us(kModel, gpu, 8, decodes(64, 2048));
    const double sparse_long = attention_us(kModel, gpu, 8, decodes(64, 131072));
    const double dense_short = attention_us("deepseek-v3", gpu, 8, decodes(64, 2048));
    const double dense_long = attention_us("deepseek-v3", gpu, 8, decodes(64, 131072));
    MESSAGE(gpu << " decode x64: DSA " << sparse_short << " -> " << sparse_long << " us, MLA " << dense_short << " -> "
                << dense_long << " us");
    CHECK(sparse_long > sparse_short);      // the indexer scores every cached token
    CHECK(sparse_long < 3 * sparse_short);  // 64x the tokens, each query still reads 2,048
    CHECK(dense_long > 5 * dense_short);    // dense MLA reads them all
    CHECK(sparse_long < dense_long / 2);
    // Prefill grows with the length, beyond the longest measured (32,768) too.
    double last = 0;
    for (int64_t n : {1024, 4096, 16384, 32768, 65536}) {
      const double t = attention_us(kModel, gpu, 8, prefill(n));
      CHECK(t > last);
      last = t;
    }
    // Near-linear, not quadratic, beyond top-k: 4x the tokens costs well under 16x.
    CHECK(attention_us(kModel, gpu, 8, prefill(32768)) < 8 * attention_us(kModel, gpu, 8, prefill(8192)));
    // A chunk after a cached prefix costs less than the whole sequence, more than none.
    const double chunk = attention_us(kModel, gpu, 8, prefill(2048, 30000));
    CHECK(chunk < attention_us(kModel, gpu, 8, prefill(32048)));
    CHECK(chunk > 0);
  }
}

TEST_CASE("DeepSeek-V3.2 where no table measures sparse attention: refused, never priced as dense MLA") {
  // H200's vllm-0.14.0 tables measure MLA but no DSA; A100 measures none.
  const Request old = test::request_or_fail(R"({"model": "deepseek-v3.2", "gpu": "H200", "tp": 8,
      "mode": "measured", "kernels": "vllm-0.14.0", "step": {"decode_requests": [{"progress_index": 10}]}})");
  auto refused = plan_measured(old, test::load_kernels("H200", "vllm-0.14.0"));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == "unsupported");
  CHECK(refused.error().path == "kernels");
  CHECK(refused.error().message.find("H200 vllm-0.14.0") != std::string::npos);
  CHECK(refused.error().message.find("sparse attention") != std::string::npos);
  // The dsa part not loaded: kernels_not_loaded naming it, never a NaN.
  const Request r = request_of(kModel, "H200", 8, decodes(1, 10));
  auto partial = plan_measured(r, test::load_kernels("H200", "vllm-0.24.0",
                                                     {"gemm-bf16", "gemm-fp8_block", "attention-bf16", "allreduce",
                                                      "moe", "moe-fp8_block", "mla"}));
  REQUIRE_FALSE(partial.ok());
  CHECK(partial.error().code == "kernels_not_loaded");
  CHECK(partial.error().message.find("dsa") != std::string::npos);
  // blis-v2 keeps pricing it as before: DeepSeek-V3's shape, the same step time.
  const auto step_time = [](const std::string& model) {
    auto json = price_json(R"({"model": ")" + model + R"(", "tp": 8, "step": )" + decodes(8, 4000) + "}");
    REQUIRE_MESSAGE(json.ok(), json.error().message);
    const size_t at = json->find("\"step_time_us\":");
    REQUIRE(at != std::string::npos);
    return json->substr(at, json->find(',', at) - at);
  };
  CHECK(step_time("deepseek-v3.2") == step_time("deepseek-v3"));
}

TEST_CASE("DeepSeek-V3.2's KV cache, by hand: the latent and the indexer's FP8 key per token and layer") {
  auto spec = model_preset(kModel)->spec;
  const Precision bf16 = precision_of(spec, WeightFormat::kBf16, KvCacheDtype::kAuto);
  const Precision fp8 = precision_of(spec, WeightFormat::kBf16, KvCacheDtype::kFp8);
  // 61 layers x (latent 512 + rotary 64, 16-bit, + indexer key 128 FP8 + 4-byte scale); every GPU holds it whole.
  CHECK(kv_bytes_per_token_per_gpu(spec, bf16, 8) == 61.0 * (576 * 2 + 132));
  CHECK(kv_bytes_per_token_per_gpu(spec, fp8, 8) == 61.0 * (576 + 132));
  auto v3 = model_preset("deepseek-v3")->spec;
  CHECK(kv_bytes_per_token_per_gpu(v3, bf16, 8) == 61.0 * 576 * 2);
  // H200 at TP 8, vLLM's defaults: blocks = floor(floor(KV memory / (16 tokens x 1,284 bytes)) / 61).
  const Request r = request_of(kModel, "H200", 8, "{}");
  auto m = request_memory(r);
  REQUIRE_MESSAGE(m.ok(), m.error().message);
  REQUIRE(m->fits);
  CHECK(m->block_size == 16);
  CHECK(m->page_bytes == 16 * 1284.0);
  CHECK(m->kv_cache_blocks == static_cast<int64_t>(std::floor(std::floor(m->kv_cache_bytes / (16 * 1284.0)) / 61)));
  CHECK(m->kv_cache_tokens == m->kv_cache_blocks * 16);
  MESSAGE("H200 TP 8: " << m->kv_cache_blocks << " blocks, " << m->kv_cache_tokens << " tokens");
}

TEST_CASE("DeepSeek-V3.2 serves in measured on H200 and B200 at TP 8") {
  for (const char* gpu : {"H200", "B200"}) {
    CAPTURE(gpu);
    KernelRegistry kernels;
    test::add_default_packs(&kernels, gpu, true);
    const Request r = test::request_or_fail(R"({"model": "deepseek-v3.2", "gpu": ")" + std::string(gpu) +
                                            R"(", "tp": 8, "mode": "measured", "workload": {"input_tokens": 4000,
        "output_tokens": 100, "concurrency": 16, "num_requests": 32}})");
    auto served = run_serve(r, kernels);
    REQUIRE_MESSAGE(served.ok(), served.error().message);
    CHECK(served->num_requests == 32);
    CHECK(served->ttft_ms.mean > 0);
    CHECK(served->tpot_ms.mean > 0);
    CHECK(std::isfinite(served->tpot_ms.mean));
  }
}

}  // namespace
}  // namespace stepcalc
