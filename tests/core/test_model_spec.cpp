// ModelSpec sizes and the operator list, on specs written by hand from public configs.
#include <cmath>
#include <string>

#include "doctest.h"
#include "model/model_spec.h"
#include "ops/operators.h"

namespace stepcalc {
namespace {

ModelSpec llama2_70b() {
  ModelSpec s;
  s.num_layers = 80;
  s.hidden_size = 8192;
  s.num_heads = 64;
  s.num_kv_heads = 8;
  s.head_dim = 128;
  s.intermediate_size = 28672;
  s.vocab_size = 32000;
  return s;
}

ModelSpec mixtral() {
  ModelSpec s;
  s.num_layers = 32;
  s.hidden_size = 4096;
  s.num_heads = 32;
  s.num_kv_heads = 8;
  s.head_dim = 128;
  s.intermediate_size = 14336;
  s.vocab_size = 32000;
  s.moe.num_experts = 8;
  s.moe.top_k = 2;
  s.moe.expert_intermediate = 14336;
  s.moe.num_moe_layers = 32;
  return s;
}

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
  const Precision bf16 = precision_of(s, false, false);
  const double tp1 = weight_bytes_per_gpu(s, bf16, 1);
  CHECK(tp1 == doctest::Approx(2 * 68976648192.0).epsilon(1e-4));
  CHECK(weight_bytes_per_gpu(s, bf16, 4) == doctest::Approx(tp1 / 4).epsilon(1e-3));
  // FP8 halves every linear layer but not the embedding and LM head.
  const Precision fp8 = precision_of(s, true, false);
  const double embed_bytes = 2 * 2 * 32000.0 * 8192;
  CHECK(weight_bytes_per_gpu(s, fp8, 1) == doctest::Approx((tp1 - embed_bytes) / 2 + embed_bytes).epsilon(1e-3));
  // K and V: 2 x 80 layers x 2 KV heads x 128 x 2 bytes at TP 4; one KV head from TP 8 on.
  CHECK(kv_bytes_per_token_per_gpu(s, bf16, 4) == 81920);
  CHECK(kv_bytes_per_token_per_gpu(s, bf16, 8) == 40960);
  CHECK(kv_bytes_per_token_per_gpu(s, bf16, 16) == 40960);
  CHECK(kv_bytes_per_token_per_gpu(s, precision_of(s, false, true), 8) == 20480);
}

TEST_CASE("MLA caches the latent once per token, on every GPU") {
  ModelSpec s = llama2_70b();
  s.mla = {512, 0, 128, 64, 128};
  const Precision p = precision_of(s, false, false);
  CHECK(kv_bytes_per_token_per_gpu(s, p, 1) == 80 * 576 * 2);
  CHECK(kv_bytes_per_token_per_gpu(s, p, 8) == 80 * 576 * 2);
}

TEST_CASE("the dense operator list has vLLM's fused shapes") {
  const OperatorList list = build_operator_list(llama2_70b(), precision_of(llama2_70b(), false, false), 4);
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
  const OperatorList tp1 = build_operator_list(llama2_70b(), precision_of(llama2_70b(), false, false), 1);
  for (const Operator& op : tp1.ops) CHECK(op.kind != OpKind::kAllreduce);
  CHECK(list.attention.heads == 16);
  CHECK(list.attention.kv_heads == 2);
}

TEST_CASE("MoE layers replace the MLP with router, fused MoE and one all-reduce") {
  ModelSpec s = mixtral();
  s.moe.num_moe_layers = 31;  // as if the first layer were dense
  s.moe.dense_intermediate = 14336;
  const OperatorList list = build_operator_list(s, precision_of(s, false, false), 2);
  const Operator* moe = find_op(list, "fused_moe");
  REQUIRE(moe != nullptr);
  CHECK(list.count(*moe) == 31);
  CHECK(list.count(*find_op(list, "gate_up_proj")) == 1);
  CHECK(find_op(list, "router")->n == 8);
  CHECK(moe->weight_bytes == doctest::Approx(8 * 3 * 4096.0 * 14336 / 2 * 2));
}

}  // namespace stepcalc
