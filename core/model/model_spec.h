// SPDX-License-Identifier: Apache-2.0
// What a model IS, resolved once from its HuggingFace config: widths, heads, head
// size, experts, latent ranks, dtypes, and notes on what the config has that the
// operator list only approximates. The reference (`blis-v2`) never reads this: it keeps
// its own few fields in ModelShape. Derived sizes (weights per GPU, KV bytes per token)
// are here so memory, serving and the operator list count them the same way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"

namespace stepcalc {

/// Mixture-of-experts layout (all zero for a dense model).
struct MoeSpec {
  int64_t num_experts = 0;          ///< routed experts: num_local_experts | n_routed_experts | num_experts
  int64_t top_k = 0;                ///< num_experts_per_tok
  int64_t expert_intermediate = 0;  ///< one expert's FFN width: moe_intermediate_size, else intermediate_size
  int64_t shared_experts = 0;       ///< n_shared_experts (DeepSeek/GLM); 1 for Llama-4 and Qwen2-MoE's shared MLP
  int64_t shared_intermediate = 0;  ///< width of the whole shared MLP (n_shared * moe_intermediate_size, ...)
  int64_t num_moe_layers = 0;       ///< layers whose FFN is the routed MoE
  int64_t dense_intermediate = 0;  ///< FFN width of the dense layers (intermediate_size; Llama-4 intermediate_size_mlp)
};

/// Multi-head latent attention (DeepSeek-style; all zero without `kv_lora_rank`).
struct MlaSpec {
  int64_t kv_lora_rank = 0;      ///< latent KV width cached per token and layer
  int64_t q_lora_rank = 0;       ///< 0: queries projected directly from the hidden state
  int64_t qk_nope_head_dim = 0;  ///< per-head query/key width without rotary part
  int64_t qk_rope_head_dim = 0;  ///< per-head rotary width (cached once per token, shared by heads)
  int64_t v_head_dim = 0;        ///< per-head value width
};

/// Which weights a checkpoint stores in FP8 (HF `quantization_config`, fp8 methods).
struct QuantSpec {
  std::string method;          ///< quant_method as given ("fp8", "fbgemm_fp8", "compressed-tensors"); empty: none
  bool fp8 = false;            ///< linear layers hold FP8 weights (1 byte per parameter)
  bool block_scaled = false;   ///< weight_block_size given (block-wise FP8 scales)
  bool attention_fp8 = false;  ///< attention projections FP8 (false when the ignore list names them)
  bool mlp_fp8 = false;        ///< dense and shared-expert MLPs FP8
  bool experts_fp8 = false;    ///< routed experts FP8
};

/// A model as vLLM would run it; HF config names in comments.
struct ModelSpec {
  std::string model_type;         ///< model_type (text_config's when present)
  std::string architecture;       ///< architectures[0]
  int64_t num_layers = 0;         ///< num_hidden_layers
  int64_t hidden_size = 0;        ///< hidden_size
  int64_t num_heads = 0;          ///< num_attention_heads
  int64_t num_kv_heads = 0;       ///< num_key_value_heads (| num_kv_heads | multi_query_group_num), else heads
  int64_t head_dim = 0;           ///< head_dim when given (Qwen3-32B: 128), else hidden_size / heads
  int64_t intermediate_size = 0;  ///< intermediate_size (| ffn_hidden_size), else 4 * hidden
  int64_t vocab_size = 0;         ///< vocab_size
  /// The context vLLM allows by default (its max_model_len when none is given):
  /// max_position_embeddings (or n_positions, max_seq_len, seq_length, ...), scaled as
  /// vLLM scales it for rope_scaling; 0 when the config gives none.
  int64_t max_model_len = 0;
  bool tie_word_embeddings = false;
  std::string activation = "silu";  ///< hidden_act
  bool qk_norm = false;             ///< per-head RMSNorm of queries and keys (Qwen3, Llama-4 use_qk_norm)
  int64_t sliding_window = 0;       ///< attention window when in use; 0: full attention
  int64_t attention_chunk = 0;      ///< Llama-4 attention_chunk_size (local attention); 0: none
  std::string dtype;                ///< torch_dtype / dtype of the unquantized weights
  double weight_bytes = 2;          ///< bytes per unquantized parameter as vLLM runs it (16-bit)
  QuantSpec quant;
  MoeSpec moe;
  MlaSpec mla;
  bool has_vision = false;     ///< a vision tower (vision_config): not part of a text step
  std::vector<Warning> notes;  ///< config features the operator list prices approximately

  bool is_moe() const { return moe.num_experts > 0 && moe.top_k > 0 && moe.num_moe_layers > 0; }
  bool is_mla() const { return mla.kv_lora_rank > 0; }
  int64_t num_dense_layers() const { return num_layers - (is_moe() ? moe.num_moe_layers : 0); }
};

/// Precision a request runs the model at: the checkpoint's, or FP8 weights when the
/// request asks `"quantization": "fp8"`; FP8 KV cache for `"kv_cache_dtype": "fp8"`.
struct Precision {
  bool attention_fp8 = false;  ///< attention projections
  bool mlp_fp8 = false;        ///< dense and shared-expert MLPs
  bool experts_fp8 = false;    ///< routed experts
  bool kv_fp8 = false;         ///< KV cache in FP8 (1 byte per element)
};

/// The checkpoint's precision, overridden to FP8 weights by `quantize_fp8` and to an
/// FP8 KV cache by `kv_fp8`. LM head, embeddings and router stay 16-bit (vLLM keeps them so).
Precision precision_of(const ModelSpec& spec, bool quantize_fp8, bool kv_fp8);

/// Parameters of the model, split as memory and the operator list need them.
struct ParamCounts {
  double embedding = 0;       ///< vocab * hidden
  double lm_head = 0;         ///< vocab * hidden, 0 when tied to the embedding
  double attention = 0;       ///< all layers' attention projections
  double dense_mlp = 0;       ///< all dense layers' MLPs
  double routed_experts = 0;  ///< every routed expert of every MoE layer
  double shared_experts = 0;  ///< shared-expert MLPs of the MoE layers
  double router = 0;          ///< router (gate) weights
  double norms = 0;           ///< RMSNorm weights
  double total() const;
  double active_per_token(const ModelSpec& spec) const;  ///< with only top-k routed experts
};
ParamCounts param_counts(const ModelSpec& spec);

/// Weight bytes one GPU holds at tensor parallelism `tp` (every expert included;
/// vocab-parallel embedding and LM head, heads split, KV heads replicated when fewer
/// than `tp`, MLA's down-projections and the router replicated).
double weight_bytes_per_gpu(const ModelSpec& spec, const Precision& precision, int64_t tp);

/// KV-cache bytes one token adds on one GPU over all layers: K and V of the KV heads
/// the GPU holds (max(1, kv_heads / tp)) x head_dim, or for MLA the latent
/// (kv_lora_rank + qk_rope_head_dim), which every GPU holds whole.
double kv_bytes_per_token_per_gpu(const ModelSpec& spec, const Precision& precision, int64_t tp);

/// KV heads one GPU holds at `tp`: kv_heads / tp, at least 1 (vLLM replicates).
int64_t kv_heads_per_gpu(const ModelSpec& spec, int64_t tp);

}  // namespace stepcalc
