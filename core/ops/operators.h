// SPDX-License-Identifier: Apache-2.0
// The operator list: what vLLM runs for one forward step of a model at a tensor-
// parallel degree, per layer and once per step, with shapes per GPU. Written once
// from a ModelSpec; a step only supplies the row counts (tokens, sampled sequences).
// Used by the `measured` estimator, and meant for the roofline plot, memory and serving.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model_spec.h"

namespace stepcalc {

/// How an operator is priced.
enum class OpKind : uint8_t {
  kGemm,         ///< Y = X W from the GEMM table (m = rows, n, k per GPU)
  kAttention,    ///< the attention kernel of a layer (priced per request from attention tables)
  kMoe,          ///< the fused-MoE kernel from the MoE table
  kAllreduce,    ///< custom all-reduce of rows x `n` bf16 elements over the TP group
  kGather,       ///< logits gather to the first rank (priced as an all-reduce of half the message)
  kElementwise,  ///< memory-bound kernel: launch floor + bytes / effective HBM bandwidth
  /// A gated DeltaNet kernel (conv1d or delta rule) of one phase, priced per step from the GDN
  /// tables: the decode requests as one batch, each prefill chunk its share of a batch of chunks.
  kLinearAttention,
};

/// Where an operator sits, which sets how many times a step runs it.
enum class OpScope : uint8_t {
  kEveryLayer,  ///< once in each of the model's layers
  kDenseLayer,  ///< once in each layer with a dense MLP
  kMoeLayer,    ///< once in each MoE layer
  kStep,        ///< once per step
  // Hybrid models (gated DeltaNet beside softmax attention) only:
  kFullAttentionLayer,  ///< once in each softmax-attention layer
  kLinearLayer,         ///< once in each linear-attention (gated DeltaNet) layer
};

/// What the operator's row count is.
enum class OpRows : uint8_t {
  kTokens,   ///< every token of the step (padded to the CUDA-graph size)
  kSampled,  ///< one row per request in the step (vLLM V1 computes logits for each)
};

/// One operator of the list. Shapes are per GPU; `n`, `k` and the byte figures are
/// per row where the operator scales with rows.
struct Operator {
  const char* name = "";  ///< stable id ("qkv_proj", "fused_moe", ...)
  OpKind kind = OpKind::kElementwise;
  OpScope scope = OpScope::kEveryLayer;
  OpRows rows = OpRows::kTokens;
  double per_layer = 1;                       ///< instances in one layer of its scope (1 for per-step operators)
  double n = 0;                               ///< GEMM output width; all-reduce/gather elements per row
  double k = 0;                               ///< GEMM reduction width
  WeightFormat format = WeightFormat::kBf16;  ///< how the weights are stored and run (GEMM, MoE)
  double weight_bytes = 0;                    ///< weights read once per instance (GEMM, MoE with every expert touched)
  double row_bytes = 0;                       ///< activation bytes read + written per row
  double row_flops = 0;                       ///< floating-point operations per row
  /// MoE shape: hidden, one expert's full intermediate width, experts, top-k.
  int moe_hidden = 0, moe_intermediate = 0, moe_experts = 0, moe_topk = 0;
  /// GPUs of a collective (0: the TP group); the expert-parallel dispatch spans ep GPUs.
  int group = 0;
  /// Rows it sees per row of this rank's step: dp for what runs on every data-parallel
  /// rank's tokens (the fused MoE and its dispatch under expert parallelism), else 1.
  double row_scale = 1;
  bool approximated = false;  ///< the nearest supported op stands in for what vLLM runs (see notes)
  bool mla_module = false;    ///< part of the measured MLA module (priced inside it where that table is used)
  bool gdn_conv = false;      ///< kLinearAttention: the causal conv1d (else the gated delta rule)
  bool gdn_prefill = false;   ///< kLinearAttention: the prefill chunks' kernel (else the decodes')
  double state_bytes = 0;     ///< kLinearAttention: state read and written per request and instance
};

/// Attention geometry per GPU.
struct AttentionShape {
  int heads = 0;     ///< query heads per GPU
  int kv_heads = 0;  ///< KV heads per GPU (replicated when fewer than TP)
  int head_dim = 0;  ///< head size the kernel runs at (MLA: latent + rotary width)
  bool mla = false;  ///< DeepSeek-style latent attention
  bool kv_fp8 = false;
  double kv_bytes_per_token = 0;  ///< per GPU and layer
  double flops_per_pair = 0;      ///< FLOPs of one (query, key) pair over the GPU's heads
  /// DeepSeek sparse attention (0 without): the tokens each query attends to (index_topk).
  int64_t topk = 0;
};

/// Gated DeltaNet geometry per GPU (hybrid models; all zero otherwise).
struct LinearShape {
  int d_conv = 0, head_k_dim = 0, head_v_dim = 0;
  int k_heads = 0, v_heads = 0;  ///< per GPU (linear_num_*_heads / tp)
  int d_model = 0;               ///< hidden_size
  bool kda = false;              ///< Kimi delta attention (the kda tables), else gated DeltaNet
};

/// Everything vLLM runs for one step, before the step's row counts are known.
struct OperatorList {
  std::vector<Operator> ops;
  AttentionShape attention;
  LinearShape linear;
  int64_t num_linear_layers = 0;  ///< gated DeltaNet layers (0: every layer is softmax attention)
  int64_t tp = 1;
  int64_t ep = 1;  ///< expert-parallel size (1: the experts split by TP)
  int64_t dp = 1;  ///< data-parallel ranks: this list is one rank's; the MoE sees all ranks' tokens
  int64_t num_layers = 0;
  int64_t num_dense_layers = 0;
  int64_t num_moe_layers = 0;
  double weight_bytes_per_gpu = 0;  ///< every weight one GPU holds
  std::vector<Warning> notes;       ///< what is priced as a nearby operator, in plain words

  /// Instances of `op` in one step.
  double count(const Operator& op) const;
};

/// Builds the list for `spec` at `precision` and `tp` (and, for a MoE model, expert
/// parallelism `ep` = tp x dp over `dp` data-parallel ranks: docs/SERVING.md, "Layouts").
/// Notes name every feature priced approximately (sliding window, chunked attention,
/// unusual activation, vision tower, MLA without measured tables is decided later by the
/// estimator).
OperatorList build_operator_list(const ModelSpec& spec, const Precision& precision, int64_t tp, int64_t ep = 1,
                                 int64_t dp = 1);

/// Name of an op kind for the result ("gemm", "attention", ...).
const char* op_kind_name(OpKind kind);
const char* op_scope_name(OpScope scope);

}  // namespace stepcalc
