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
  /// DeepSeek sparse attention (DeepSeek-V3.2; 0 without `index_topk`): a lightning indexer
  /// (index_n_heads heads of `index_head_dim`) scores every cached token, and each query attends
  /// only to the `index_topk` best. vLLM caches the indexer's keys too (FP8 + a float scale per 128).
  int64_t index_topk = 0;
  int64_t index_head_dim = 0;
  /// Bytes of the indexer's key one token adds per layer: FP8 values and a 4-byte scale per 128.
  int64_t index_key_bytes = 0;
};

/// Gated DeltaNet linear attention (Qwen3-Next), or Kimi delta attention (Kimi-Linear: `kda`,
/// key and value heads the same heads); all zero without linear-attention layers. Each such
/// layer keeps a fixed-size state per request instead of a growing KV cache.
struct LinearAttentionSpec {
  bool kda = false;         ///< Kimi delta attention (linear_attn_config), else gated DeltaNet
  int64_t num_layers = 0;   ///< layers of linear attention (layer_types "linear_attention", or all but
                            ///< every full_attention_interval-th)
  int64_t num_k_heads = 0;  ///< linear_num_key_heads
  int64_t num_v_heads = 0;  ///< linear_num_value_heads
  int64_t head_k_dim = 0;   ///< linear_key_head_dim
  int64_t head_v_dim = 0;   ///< linear_value_head_dim
  int64_t conv_kernel = 0;  ///< linear_conv_kernel_dim (d_conv)
  /// Channels of the causal conv1d: queries and keys (2 x k_heads x head_k_dim) and values.
  int64_t conv_dim() const { return 2 * num_k_heads * head_k_dim + num_v_heads * head_v_dim; }
};

/// How a group of linear weights is stored and run: 16-bit; FP8 with one scale per
/// tensor or channel (`fp8`) or per 128 x 128 block (`fp8_block`); NVFP4 (4-bit floats
/// with an FP8 scale per 16, activations quantised too, Blackwell); MXFP4 (4-bit floats
/// with a power-of-two scale per 32, 16-bit activations); INT4 weight-only (a 16-bit
/// scale per group, 16-bit activations).
enum class WeightFormat : uint8_t { kBf16, kFp8, kFp8Block, kNvfp4, kMxfp4, kInt4 };

/// "bf16", "fp8", "fp8_block", "nvfp4", "mxfp4", "int4".
const char* weight_format_name(WeightFormat format);
/// Bytes one parameter takes in `format`, scales included (`group_size`: INT4's scale
/// group, 0 for the usual 128).
double weight_format_bytes(WeightFormat format, int64_t group_size = 0);
/// The format family a request's `quantization` names: fp8 and fp8_block are both "fp8".
bool same_format_family(WeightFormat a, WeightFormat b);

/// Which weights a checkpoint stores quantised, and how (HF `quantization_config`, or
/// ModelOpt's `hf_quant_config.json` given as a quantization_config with quant_method
/// "modelopt").
struct QuantSpec {
  std::string method;                         ///< quant_method as given ("fp8", "mxfp4", "modelopt", ...); empty: none
  WeightFormat format = WeightFormat::kBf16;  ///< what the quantised modules hold (kBf16: nothing is quantised)
  bool attention = false;                     ///< attention projections quantised (false when ignored)
  bool mlp = false;                           ///< dense and shared-expert MLPs quantised
  bool experts = false;                       ///< routed experts quantised
  int64_t group_size = 0;                     ///< INT4 scale group (0: 128)
  bool kv_fp8 = false;  ///< the checkpoint asks for an FP8 KV cache (ModelOpt kv_cache_quant_algo FP8)
  bool quantized() const { return format != WeightFormat::kBf16 && (attention || mlp || experts); }
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
  /// The query and key norms span every head at once (MiniMax-M2's qk_norm_type "per_layer"):
  /// under TP each GPU holds some heads, so vLLM all-reduces each token's two variances.
  bool qk_norm_all_heads = false;
  int64_t sliding_window = 0;  ///< attention window when in use; 0: full attention
  /// Layers that attend within the window (layer_types' sliding_attention; every
  /// sliding_window_pattern-th layer full, Gemma-style; all when neither says): vLLM's
  /// hybrid KV allocator holds only the window's blocks for them.
  int64_t sliding_layers = 0;
  int64_t attention_chunk = 0;  ///< Llama-4 attention_chunk_size (local attention); 0: none
  std::string dtype;            ///< torch_dtype / dtype of the unquantized weights
  double weight_bytes = 2;      ///< bytes per unquantized parameter as vLLM runs it (16-bit)
  QuantSpec quant;
  MoeSpec moe;
  MlaSpec mla;
  LinearAttentionSpec linear;
  /// Full-attention layers gate their output with a sigmoid of a second query-sized
  /// projection (Qwen3-Next's gated attention; `attn_output_gate`): q_proj is twice as wide.
  bool attn_output_gate = false;
  bool has_vision = false;     ///< a vision tower (vision_config): not part of a text step
  std::vector<Warning> notes;  ///< config features the operator list prices approximately

  bool is_moe() const { return moe.num_experts > 0 && moe.top_k > 0 && moe.num_moe_layers > 0; }
  bool is_mla() const { return mla.kv_lora_rank > 0; }
  bool is_sparse_mla() const { return is_mla() && mla.index_topk > 0; }
  bool is_hybrid_linear() const { return linear.num_layers > 0; }
  /// Layers of softmax attention (the only ones with a KV cache).
  int64_t num_attention_layers() const { return num_layers - linear.num_layers; }
  int64_t num_dense_layers() const { return num_layers - (is_moe() ? moe.num_moe_layers : 0); }
};

/// Precision a request runs the model at, per group of weights, and the KV cache's.
struct Precision {
  WeightFormat attention = WeightFormat::kBf16;  ///< attention projections
  WeightFormat mlp = WeightFormat::kBf16;        ///< dense and shared-expert MLPs
  WeightFormat experts = WeightFormat::kBf16;    ///< routed experts
  int64_t group_size = 0;                        ///< INT4 scale group (0: 128)
  bool kv_fp8 = false;                           ///< KV cache in FP8 (1 byte per element)
  bool quantized() const {
    return attention != WeightFormat::kBf16 || mlp != WeightFormat::kBf16 || experts != WeightFormat::kBf16;
  }
  /// The lowest-bit format any group runs in (kBf16 when none is quantised).
  WeightFormat main_format() const;
};

/// The KV cache a request asks for (`kv_cache_dtype`): "auto" is the checkpoint's (FP8
/// when it says kv_cache_quant_algo FP8, as vLLM >= 0.13 reads it; else 16-bit).
enum class KvCacheDtype : uint8_t { kAuto, kBf16, kFp8 };

/// The checkpoint's precision; `quantization` (kBf16: none asked) quantises every linear
/// layer to that format unless the checkpoint is already of its family, whose own modules
/// and scaling then stand. LM head, embeddings and router stay 16-bit (vLLM keeps them so).
Precision precision_of(const ModelSpec& spec, WeightFormat quantization, KvCacheDtype kv);

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

/// The GPUs a MoE layer's routed experts are split over (docs/SERVING.md, "Layouts"): by
/// expert over the `ep` GPUs under expert parallelism (ep > 1), else each expert sliced
/// over vLLM's MoE tensor-parallel group, tp x dp (one data-parallel rank: tp).
int64_t expert_gpus(int64_t tp, int64_t ep, int64_t dp);

/// Weight bytes one GPU holds at tensor parallelism `tp` (vocab-parallel embedding and LM
/// head, heads split, KV heads replicated when fewer than `tp`, MLA's down-projections and
/// the router replicated); the routed experts split over `experts_over` GPUs
/// (expert_gpus(); 0: `tp`).
double weight_bytes_per_gpu(const ModelSpec& spec, const Precision& precision, int64_t tp, int64_t experts_over = 0);

/// KV-cache bytes one token adds on one GPU over all layers: K and V of the KV heads
/// the GPU holds (max(1, kv_heads / tp)) x head_dim, or for MLA the latent
/// (kv_lora_rank + qk_rope_head_dim), which every GPU holds whole, and with DeepSeek sparse
/// attention the indexer's key (MlaSpec::index_key_bytes, FP8 whatever the KV cache's dtype).
double kv_bytes_per_token_per_gpu(const ModelSpec& spec, const Precision& precision, int64_t tp);

/// KV heads one GPU holds at `tp`: kv_heads / tp, at least 1 (vLLM replicates).
int64_t kv_heads_per_gpu(const ModelSpec& spec, int64_t tp);

/// The fixed state one request keeps in one linear-attention layer on one GPU, bytes: the
/// conv state ((d_conv - 1) x conv_dim / tp) and the recurrent state (v_heads / tp x
/// head_k_dim x head_v_dim), both in the model's 16-bit dtype (vLLM's default
/// mamba_cache_dtype "auto"); Kimi delta attention's recurrent state in float32 (vLLM's
/// kda_state_dtype). 0 without linear attention.
double linear_state_bytes_per_layer(const ModelSpec& spec, int64_t tp);

}  // namespace stepcalc
