// SPDX-License-Identifier: Apache-2.0
// Precisions as vLLM runs them (issue 22): each weight format reads its own measured
// tables, checkpoints say which modules are quantised, a GPU that does not measure a
// format refuses it, and the physics checks hold on the default tables.
#include <algorithm>
#include <memory>
#include <string>

#include "doctest.h"
#include "estimators/measured.h"
#include "io/request_json.h"
#include "kernel_test_support.h"
#include "test_support.h"

namespace stepcalc {
namespace {

const KernelSet* default_set(const std::string& gpu) {
  const GpuSpec* spec = find_gpu_spec(gpu);
  REQUIRE(spec != nullptr);
  const KernelSet* set = find_kernel_set(gpu, spec->default_kernels);
  REQUIRE(set != nullptr);
  return set;
}

std::shared_ptr<const KernelDb> db_of(const std::string& gpu) {
  return test::load_kernels(gpu, default_set(gpu)->version);
}

/// A request for `model` (a preset name, or a config file's JSON), with extra fields.
Request request(const std::string& model, const std::string& gpu, int64_t tp, const std::string& extra = "") {
  const std::string m = model[0] == '{' ? model : "\"" + model + "\"";
  return test::request_or_fail("{\"model\": " + m + ", \"gpu\": \"" + gpu + "\", \"mode\": \"measured\", \"tp\": " +
                               std::to_string(tp) + (extra.empty() ? "" : ", " + extra) + ", \"step\": {}}");
}

/// A shipped HF config; one without a dtype gets bfloat16, its checkpoints' unquantised
/// dtype (as tools/validate-ledger.mjs does).
std::string config(const char* file) {
  std::string text = test::read_file(std::string("data/silicon/model_configs/") + file);
  if (text.find("\"torch_dtype\"") == std::string::npos && text.find("\"dtype\"") == std::string::npos &&
      text.find("\"text_config\"") == std::string::npos)
    text.insert(text.find('{') + 1, "\"torch_dtype\": \"bfloat16\", ");
  return text;
}

Expected<MeasuredPlan> plan(const Request& r) { return plan_measured(r, db_of(r.hardware.gpu)); }

double gpu_us(Request r, const Step& step) {
  r.step = step;
  auto p = plan(r);
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  return price_measured_summary(p.value(), step).gpu_us;
}

Step decode_batch(int n, int64_t kv) {
  Step s;
  for (int i = 0; i < n; ++i) s.decode.push_back({kv, 1});
  return s;
}

Step prefill(int64_t tokens) {
  Step s;
  s.prefill.push_back({0, tokens});
  return s;
}

}  // namespace

TEST_CASE("checkpoints: each quantization config says which modules run in which format") {
  const ModelSpec gpt_oss = request(config("openai--gpt-oss-120b_config.json"), "H100", 1).model.spec;
  CHECK(gpt_oss.quant.format == WeightFormat::kMxfp4);
  CHECK(gpt_oss.quant.experts);
  CHECK_FALSE(gpt_oss.quant.attention);  // modules_to_not_convert names self_attn
  const ModelSpec kimi = request(config("moonshotai--Kimi-K2.5_config.json"), "H200", 8).model.spec;
  CHECK(kimi.quant.format == WeightFormat::kInt4);
  CHECK(kimi.quant.group_size == 32);
  CHECK(kimi.quant.experts);
  CHECK_FALSE(kimi.quant.attention);
  CHECK_FALSE(kimi.quant.mlp);  // shared experts and the dense layer's MLP are ignored
  const ModelSpec minimax = request(config("MiniMaxAI--MiniMax-M2.5_config.json"), "B200", 2).model.spec;
  CHECK(minimax.quant.format == WeightFormat::kFp8Block);
  CHECK(minimax.quant.attention);
  CHECK(minimax.quant.experts);
  const ModelSpec nv = request(config("nvidia--MiniMax-M2.5-NVFP4_config.json"), "B200", 2).model.spec;
  CHECK(nv.quant.format == WeightFormat::kNvfp4);
  CHECK(nv.quant.experts);
  CHECK_FALSE(nv.quant.attention);
  // Qwen3-235B-A22B-FP8 leaves every layer's norms (post_attention_layernorm) and router gate
  // in 16 bits: no attention weight, so its attention GEMMs are FP8 blocks like the experts.
  const ModelSpec qwen = request(config("Qwen--Qwen3-235B-A22B-FP8_config.json"), "H200", 4).model.spec;
  CHECK(qwen.quant.format == WeightFormat::kFp8Block);
  CHECK(qwen.quant.attention);
  CHECK(qwen.quant.experts);
}

TEST_CASE("a ModelOpt checkpoint: hf_quant_config.json as a quantization_config, nested as shipped or flat") {
  std::string cfg = config("nvidia--Llama-3.1-70B-Instruct-FP8_config.json");
  const std::string hf =
      test::read_file("data/silicon/model_configs/nvidia--Llama-3.1-70B-Instruct-FP8_hf_quant_config.json");
  const std::string nested =
      "{\"quantization_config\": " + hf.substr(0, hf.rfind('}')) + ", \"quant_method\": \"modelopt\"}, ";
  cfg.insert(cfg.find('{') + 1, nested.substr(1, nested.size() - 1));
  const ModelSpec s = request(cfg, "B200", 1).model.spec;
  CHECK(s.quant.format == WeightFormat::kFp8);
  CHECK(s.quant.attention);
  CHECK(s.quant.kv_fp8);  // kv_cache_quant_algo FP8: "auto" is an FP8 KV cache
  CHECK(precision_of(s, WeightFormat::kBf16, KvCacheDtype::kAuto).kv_fp8);
}

TEST_CASE("bytes per parameter: 4-bit formats with their scales, KV FP8 from a ModelOpt checkpoint") {
  CHECK(weight_format_bytes(WeightFormat::kNvfp4) == 0.5625);
  CHECK(weight_format_bytes(WeightFormat::kMxfp4) == 0.53125);
  CHECK(weight_format_bytes(WeightFormat::kInt4, 32) == 0.5625);
  CHECK(weight_format_bytes(WeightFormat::kInt4) == 0.515625);
  ModelSpec s = request("llama-3.1-70b-instruct", "B200", 1).model.spec;
  const double bf16 = weight_bytes_per_gpu(s, precision_of(s, WeightFormat::kBf16, KvCacheDtype::kAuto), 1);
  const double fp4 = weight_bytes_per_gpu(s, precision_of(s, WeightFormat::kNvfp4, KvCacheDtype::kAuto), 1);
  CHECK(fp4 < 0.35 * bf16);  // linear layers at 0.5625 of 2 bytes; embeddings and LM head stay 16-bit
  s.quant.kv_fp8 = true;     // as a ModelOpt hf_quant_config with kv_cache_quant_algo FP8 says
  CHECK(precision_of(s, WeightFormat::kBf16, KvCacheDtype::kAuto).kv_fp8);
  CHECK_FALSE(precision_of(s, WeightFormat::kBf16, KvCacheDtype::kBf16).kv_fp8);  // an explicit bf16 wins
}

TEST_CASE("a format a GPU does not measure is refused at quantization, never priced as another") {
  auto h100 = plan(request("llama-3.1-70b-instruct", "H100", 4, R"("quantization": "nvfp4")"));
  REQUIRE_FALSE(h100.ok());
  CHECK(h100.error().code == "unsupported");
  CHECK(h100.error().path == "quantization");
  CHECK(h100.error().message.find("nvfp4 GEMM") != std::string::npos);
  // MXFP4 and INT4 weights with 16-bit activations exist as MoE kernels, not dense GEMMs.
  auto dense_int4 = plan(request("llama-3.1-70b-instruct", "B200", 4, R"("quantization": "int4")"));
  REQUIRE_FALSE(dense_int4.ok());
  CHECK(dense_int4.error().code == "unsupported");
  // A checkpoint already quantised to another format runs as stored.
  auto clash = plan(request(config("openai--gpt-oss-120b_config.json"), "B200", 1, R"("quantization": "fp8")"));
  REQUIRE_FALSE(clash.ok());
  CHECK(clash.error().code == "invalid_value");
  CHECK(clash.error().path == "quantization");
}

TEST_CASE("each format reads its own tables: gpt-oss MXFP4 experts, Kimi INT4 experts, NVFP4 on B200") {
  for (const char* gpu : {"H100", "H200", "B200"}) {
    CAPTURE(gpu);
    auto p = plan(request(config("openai--gpt-oss-120b_config.json"), gpu, 1));
    REQUIRE_MESSAGE(p.ok(), p.error().message);
    CHECK(p->moe_dtype_of(WeightFormat::kMxfp4) == KernelDtype::kMxfp4);
  }
  auto kimi = plan(request(config("moonshotai--Kimi-K2.5_config.json"), "B200", 8));
  REQUIRE_MESSAGE(kimi.ok(), kimi.error().message);
  CHECK(kimi->moe_dtype_of(WeightFormat::kInt4) == KernelDtype::kInt4);
  const KernelSet* b200 = default_set("B200");
  const auto parts =
      measured_kernel_parts(request("llama-3.1-70b-instruct", "B200", 2, R"("quantization": "nvfp4")"), *b200);
  CHECK(std::find(parts.begin(), parts.end(), "gemm-nvfp4") != parts.end());
}

TEST_CASE("physics on the default tables: FP8 faster than BF16 on H100, NVFP4 faster than FP8 on B200") {
  // Issue 22's checks: Llama-3.1-70B at TP 4 on H100, a batch-1 decode 1.3-2.5x faster in
  // FP8, a 4k-token prefill 1.2-2.2x faster; on B200 NVFP4 faster than FP8 for both.
  const Request bf16 = request("llama-3.1-70b-instruct", "H100", 4);
  const Request fp8 = request("llama-3.1-70b-instruct", "H100", 4, R"("quantization": "fp8")");
  const double decode = gpu_us(bf16, decode_batch(1, 1024)) / gpu_us(fp8, decode_batch(1, 1024));
  const double pre = gpu_us(bf16, prefill(4096)) / gpu_us(fp8, prefill(4096));
  MESSAGE("H100 TP4 BF16/FP8: decode " << decode << ", 4k prefill " << pre);
  CHECK(decode >= 1.3);
  CHECK(decode <= 2.5);
  CHECK(pre >= 1.2);
  CHECK(pre <= 2.2);
  const Request b_fp8 = request("llama-3.1-70b-instruct", "B200", 1, R"("quantization": "fp8")");
  const Request b_fp4 = request("llama-3.1-70b-instruct", "B200", 1, R"("quantization": "nvfp4")");
  const double b_decode = gpu_us(b_fp8, decode_batch(1, 1024)) / gpu_us(b_fp4, decode_batch(1, 1024));
  const double b_pre = gpu_us(b_fp8, prefill(4096)) / gpu_us(b_fp4, prefill(4096));
  MESSAGE("B200 TP1 FP8/NVFP4: decode " << b_decode << ", 4k prefill " << b_pre);
  CHECK(b_decode > 1.0);
  CHECK(b_pre > 1.0);
}

}  // namespace stepcalc
