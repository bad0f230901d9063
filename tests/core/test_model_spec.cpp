// SPDX-License-Identifier: Apache-2.0
// ModelSpec sizes and the operator list, on specs written by hand from public configs.
#include <cmath>
#include <string>

#include "doctest.h"
#include "model/model_spec.h"
#include "model_spec_fixtures.h"
#include "ops/operators.h"

namespace stepcalc {
namespace {

using fixtures::llama2_70b;
using fixtures::mixtral;

const Operator* find_op(const OperatorList& list, const std::string& name) {
  for (const Operator& op : list.ops)
    if (name == op.name) return &op;
  return nullptr;
}

}  // namespace

TEST_CASE("param counts match the published sizes of Llama-2-70B and Mixtral-8x7B") {
  // Llama-2-70B: 68,976,648,192 parameters (the sum over its safetensors index).
  CHECK(param_counts(llama2_70b()).total() == doctest::Approx(68976648192.0).epsilon(1e-4));
  // Mixtral-8x7B: 46.7B in total, 12.9B active per token (Mistral AI's announcement).
  const ParamCounts m = param_counts(mixtral());
  CHECK(m.total() / 1e9 == doctest::Approx(46.7).epsilon(0.01));
  CHECK(m.active_per_token(mixtral()) / 1e9 == doctest::Approx(12.9).epsilon(0.02));
}

TEST_CASE("weights and KV per GPU follow TP, FP8 and KV-head replication") {
  const ModelSpec s = llama2_70b();
  const Precision bf16 = precision_of(s, WeightFormat::kBf16, KvCacheDtype::kAuto);
  const double tp1 = weight_bytes_per_gpu(s, bf16, 1);
  CHECK(tp1 == doctest::Approx(2 * 68976648192.0).epsilon(1e-4));
  CHECK(weight_bytes_per_gpu(s, bf16, 4) == doctest::Approx(tp1 / 4).epsilon(1e-3));
  // FP8 halves every linear layer but not the embedding and LM head.
  const Precision fp8 = precision_of(s, WeightFormat::kFp8, KvCacheDtype::kAuto);
  const double embed_bytes = 2 * 2 * 32000.0 * 8192;
  CHECK(weight_bytes_per_gpu(s, fp8, 1) == doctest::Approx((tp1 - embed_bytes) / 2 + embed_bytes).epsilon(1e-3));
  // K and V: 2 x 80 layers x 2 KV heads x 128 x 2 bytes at TP 4; one KV head from TP 8 on.
  CHECK(kv_bytes_per_token_per_gpu(s, bf16, 4) == 81920);
  CHECK(kv_bytes_per_token_per_gpu(s, bf16, 8) == 40960);
  CHECK(kv_bytes_per_token_per_gpu(s, bf16, 16) == 40960);
  CHECK(kv_bytes_per_token_per_gpu(s, precision_of(s, WeightFormat::kBf16, KvCacheDtype::kFp8), 8) == 20480);
}

TEST_CASE("MLA caches the latent once per token, on every GPU") {
  ModelSpec s = llama2_70b();
  s.mla = {512, 0, 128, 64, 128};
  const Precision p = precision_of(s, WeightFormat::kBf16, KvCacheDtype::kAuto);
  CHECK(kv_bytes_per_token_per_gpu(s, p, 1) == 80 * 576 * 2);
  CHECK(kv_bytes_per_token_per_gpu(s, p, 8) == 80 * 576 * 2);
}

TEST_CASE("the dense operator list has vLLM's fused shapes") {
  const OperatorList list =
      build_operator_list(llama2_70b(), precision_of(llama2_70b(), WeightFormat::kBf16, KvCacheDtype::kAuto), 4);
  const Operator* qkv = find_op(list, "qkv_proj");
  REQUIRE(qkv != nullptr);
  CHECK(qkv->n == (16 + 2 * 2) * 128);  // (64 + 2 * 8) * 128 / 4
  CHECK(qkv->k == 8192);
  const Operator* gate_up = find_op(list, "gate_up_proj");
  REQUIRE(gate_up != nullptr);
  CHECK(gate_up->n == 2 * 28672 / 4);
  CHECK(list.count(*gate_up) == 80);
  const Operator* down = find_op(list, "down_proj");
  REQUIRE(down != nullptr);
  CHECK(down->k == 28672 / 4);
  // Two all-reduces per layer and one after the embedding; none at TP 1.
  double allreduces = 0;
  for (const Operator& op : list.ops)
    if (op.kind == OpKind::kAllreduce) allreduces += list.count(op);
  CHECK(allreduces == 161);
  const OperatorList tp1 =
      build_operator_list(llama2_70b(), precision_of(llama2_70b(), WeightFormat::kBf16, KvCacheDtype::kAuto), 1);
  for (const Operator& op : tp1.ops) CHECK(op.kind != OpKind::kAllreduce);
  CHECK(list.attention.heads == 16);
  CHECK(list.attention.kv_heads == 2);
}

TEST_CASE("MoE layers replace the MLP with router, fused MoE and one all-reduce") {
  ModelSpec s = mixtral();
  s.moe.num_moe_layers = 31;  // as if the first layer were dense
  s.moe.dense_intermediate = 14336;
  const OperatorList list = build_operator_list(s, precision_of(s, WeightFormat::kBf16, KvCacheDtype::kAuto), 2);
  const Operator* moe = find_op(list, "fused_moe");
  REQUIRE(moe != nullptr);
  CHECK(list.count(*moe) == 31);
  CHECK(list.count(*find_op(list, "gate_up_proj")) == 1);
  CHECK(find_op(list, "router")->n == 8);
  CHECK(moe->weight_bytes == doctest::Approx(8 * 3 * 4096.0 * 14336 / 2 * 2));
}

TEST_CASE("MXFP4 experts pick their own experts: no topk_softmax beside the fused MoE") {
  // vLLM runs MXFP4 experts (gpt-oss) as one monolithic kernel handed the router's logits; its
  // MoE table times that routing too, so a separate topk_softmax would be counted twice.
  const ModelSpec s = mixtral();
  Precision precision = precision_of(s, WeightFormat::kBf16, KvCacheDtype::kAuto);
  const OperatorList bf16 = build_operator_list(s, precision, 2);
  precision.experts = WeightFormat::kMxfp4;
  const OperatorList quantised = build_operator_list(s, precision, 2);
  CHECK(find_op(bf16, "topk_softmax") != nullptr);
  CHECK(find_op(quantised, "topk_softmax") == nullptr);
  CHECK(find_op(quantised, "router") != nullptr);  // the router GEMM stays outside the kernel
  CHECK(quantised.ops.size() + 1 == bf16.ops.size());
}

}  // namespace stepcalc

// The presets' specs, resolved from their HF configs (numbers from the configs).
#include "io/request_json.h"

namespace stepcalc {

TEST_CASE("the presets resolve to their ModelSpec") {
  auto spec = [](const char* name) {
    auto m = model_preset(name);
    REQUIRE_MESSAGE(m.ok(), name);
    return m->spec;
  };
  const ModelSpec qwen32 = spec("qwen3-32b");
  CHECK(qwen32.head_dim == 128);  // although hidden / heads = 80
  CHECK(qwen32.qk_norm);
  CHECK(qwen32.num_kv_heads == 8);
  CHECK_FALSE(qwen32.is_moe());
  // Mixtral: 8 experts, top-2, every layer MoE, no shared expert.
  const ModelSpec mixtral = spec("mixtral-8x7b-v0.1");
  CHECK(mixtral.moe.num_experts == 8);
  CHECK(mixtral.moe.top_k == 2);
  CHECK(mixtral.moe.num_moe_layers == 32);
  CHECK(mixtral.moe.expert_intermediate == 14336);
  CHECK(mixtral.moe.shared_intermediate == 0);
  // DeepSeek-V2-Lite: the first layer dense, 2 shared experts, MLA without q_lora.
  const ModelSpec ds = spec("deepseek-v2-lite");
  CHECK(ds.moe.num_moe_layers == 26);
  CHECK(ds.num_dense_layers() == 1);
  CHECK(ds.moe.shared_intermediate == 2 * 1408);
  CHECK(ds.moe.dense_intermediate == 10944);
  CHECK(ds.mla.kv_lora_rank == 512);
  CHECK(ds.mla.q_lora_rank == 0);
  CHECK(ds.mla.qk_rope_head_dim == 64);
  // DeepSeek-V2-Lite has 15.7B parameters, 2.4B active besides the input embedding (its model card).
  const ParamCounts dc = param_counts(ds);
  CHECK(dc.total() / 1e9 == doctest::Approx(15.7).epsilon(0.02));
  CHECK((dc.active_per_token(ds) - dc.embedding) / 1e9 == doctest::Approx(2.4).epsilon(0.03));
  // Qwen3-30B-A3B: 128 experts, top-8, 30.5B in total, 3.3B active (its model card).
  const ModelSpec q30 = spec("qwen3-30b-a3b");
  CHECK(q30.moe.num_moe_layers == 48);
  CHECK(param_counts(q30).total() / 1e9 == doctest::Approx(30.5).epsilon(0.02));
  CHECK(param_counts(q30).active_per_token(q30) / 1e9 == doctest::Approx(3.3).epsilon(0.05));
  // Llama-4-Scout FP8: text_config merged, 16 experts top-1 plus a shared expert,
  // compressed-tensors FP8 with the attention projections left in BF16.
  const ModelSpec scout = spec("llama-4-scout-17b-16e-instruct-fp8-dynamic");
  CHECK(scout.hidden_size == 5120);
  CHECK(scout.moe.num_experts == 16);
  CHECK(scout.moe.top_k == 1);
  CHECK(scout.moe.shared_intermediate == 8192);
  CHECK(scout.quant.format == WeightFormat::kFp8);
  CHECK_FALSE(scout.quant.attention);
  CHECK(scout.quant.experts);
  CHECK(scout.has_vision);
  // Llama-4-Scout: 109B parameters in total, 17B active (Meta's model card), text part.
  CHECK(param_counts(scout).total() / 1e9 == doctest::Approx(107.8).epsilon(0.03));
  CHECK(param_counts(scout).active_per_token(scout) / 1e9 == doctest::Approx(17).epsilon(0.05));
  // GLM FP8: block-scaled fp8, MLA with q_lora, 3 dense layers.
  const ModelSpec glm = spec("glm-5.2-fp8");
  CHECK(glm.quant.format == WeightFormat::kFp8Block);
  CHECK(glm.quant.quantized());
  CHECK(glm.num_dense_layers() == 3);
  CHECK(glm.mla.q_lora_rank == 2048);
  // Dense BF16 models without quantization, a sliding window only when in use.
  const ModelSpec qwen25 = spec("qwen2.5-7b-instruct");
  CHECK(qwen25.sliding_window == 0);
  CHECK_FALSE(qwen25.quant.quantized());
  CHECK(spec("llama-3.1-8b-instruct").head_dim == 128);
  for (const std::string& name : model_preset_names()) {
    const ModelSpec s = spec(name.c_str());
    CHECK_MESSAGE(s.head_dim > 0, name);
    CHECK_MESSAGE(param_counts(s).total() > 1e9, name);
  }
}

TEST_CASE("a query/key norm over every head (MiniMax-M2) all-reduces its variances under TP; per-head norms do not") {
  auto ops = [](const char* name, int64_t tp) {
    auto m = model_preset(name);
    REQUIRE_MESSAGE(m.ok(), name);
    return build_operator_list(m->spec, precision_of(m->spec, WeightFormat::kBf16, KvCacheDtype::kAuto), tp);
  };
  // MiniMax-M2.5's config: use_qk_norm with qk_norm_type "per_layer" (vLLM's
  // MiniMaxText01RMSNormTP: one all-reduce of each token's two fp32 variances a layer).
  REQUIRE(model_preset("minimax-m2.5")->spec.qk_norm_all_heads);
  const OperatorList tp4 = ops("minimax-m2.5", 4);
  const Operator* qk = find_op(tp4, "qk_norm_all_reduce");
  REQUIRE(qk != nullptr);
  CHECK(qk->kind == OpKind::kAllreduce);
  CHECK(qk->n == 4);  // two fp32 a token, in bf16 elements
  CHECK(tp4.count(*qk) == 62);
  CHECK(find_op(ops("minimax-m2.5", 1), "qk_norm_all_reduce") == nullptr);
  // Qwen3's norm is per head: each GPU normalises its own heads.
  CHECK_FALSE(model_preset("qwen3-32b")->spec.qk_norm_all_heads);
  CHECK(find_op(ops("qwen3-32b", 4), "qk_norm") != nullptr);
  CHECK(find_op(ops("qwen3-32b", 4), "qk_norm_all_reduce") == nullptr);
}

}  // namespace stepcalc

namespace stepcalc {

TEST_CASE("mlp_only_layers: counted once per layer, however long the list (was a search per layer)") {
  // 10,000 layers and a list of 1,000,000 entries that name no layer but every 7th,
  // plus out-of-range and negative entries: linear work.
  std::string list = "[-5, 10000, 123456789";
  for (int i = 0; i < 1000000; ++i) list += "," + std::to_string(i % 7 == 0 && i < 10000 ? i : 20000 + i);
  list += "]";
  const std::string request = R"({"model": {"num_hidden_layers": 10000, "hidden_size": 64, "num_attention_heads": 1,
      "num_key_value_heads": 1, "intermediate_size": 64, "vocab_size": 100, "num_local_experts": 4,
      "num_experts_per_tok": 2, "torch_dtype": "bfloat16", "mlp_only_layers": )" +
                              list + R"(}, "step": {}})";
  auto r = parse_request(request);
  REQUIRE(r.ok());
  CHECK(r->model.spec.moe.num_moe_layers == 10000 - 1429);  // layers 0, 7, ..., 9996 are dense
}

}  // namespace stepcalc

namespace stepcalc {

TEST_CASE("context: max_model_len as vLLM derives it, and a step beyond it is warned about") {
  const auto context = [](const char* preset) {
    auto m = model_preset(preset);
    REQUIRE_MESSAGE(m.ok(), preset);
    return m->spec.max_model_len;
  };
  CHECK(context("llama-2-7b-hf") == 4096);
  CHECK(context("llama-3.1-8b-instruct") == 131072);  // rope_type llama3 keeps the length
  CHECK(context("deepseek-v2-lite") == 4096 * 40);    // yarn: original x factor
  CHECK(context("llama-4-scout-17b-16e-instruct-fp8-dynamic") == 10485760);
  CHECK(context("qwen3-32b") == 40960);
  auto yarn = parse_request(R"({"model": {"num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4,
      "intermediate_size": 512, "torch_dtype": "bfloat16", "max_position_embeddings": 32768,
      "rope_scaling": {"type": "yarn", "factor": 4, "original_max_position_embeddings": 32768}}, "step": {}})");
  REQUIRE(yarn.ok());
  CHECK(yarn->model.spec.max_model_len == 131072);
  auto explicit_fields = parse_request(R"({"model": {"num_hidden_layers": 2, "hidden_size": 256,
      "num_attention_heads": 4, "intermediate_size": 512, "bytes_per_param": 2}, "step": {}})");
  REQUIRE(explicit_fields.ok());
  CHECK(explicit_fields->model.spec.max_model_len == 0);  // no context given: nothing to check
}

}  // namespace stepcalc
