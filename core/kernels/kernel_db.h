// SPDX-License-Identifier: Apache-2.0
// The measured kernel database: vLLM kernel times of one GPU and one vLLM version
// (bench_data/aic/, from NVIDIA AIConfigurator, Apache-2.0), behind one lookup
// interface that always returns a time and where it came from. Immutable after
// construction; built from a packed binary (tools/pack-kernels.mjs) or, in tests,
// from tables given directly.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/gpu_spec.h"

namespace stepcalc {

/// Data type of GEMM/MoE weights or of the KV cache, as the tables name them: bf16,
/// fp8 (per-tensor scaled), fp8_block (128 x 128 block scales), nvfp4 (NVFP4 weights and
/// activations), mxfp4 (MXFP4 weights, 16-bit activations), int4 (weight-only INT4).
/// KV caches are bf16 or fp8 only.
enum class KernelDtype : uint8_t { kBf16, kFp8, kFp8Block, kNvfp4, kMxfp4, kInt4 };
inline constexpr int kKernelDtypeCount = 6;

/// The tables of a pack.
enum class KernelTable : uint8_t {
  kGemm,
  kDecodeAttention,
  kPrefillAttention,
  kAllreduce,
  kMoe,
  kMlaPrefill,
  kMlaDecode,
  kGdnConvDecode,   ///< gated DeltaNet: causal_conv1d_update (decode)
  kGdnDecode,       ///< gated DeltaNet: the recurrent delta rule (decode)
  kGdnConvPrefill,  ///< gated DeltaNet: causal_conv1d_fn (prefill)
  kGdnPrefill,      ///< gated DeltaNet: the chunked delta rule (prefill)
  kDsaPrefill,      ///< DeepSeek sparse attention module (prefill): kMlaPrefill + 6
  kDsaDecode,       ///< DeepSeek sparse attention module (decode): kMlaDecode + 6
  kKdaDecode,       ///< Kimi delta attention: fused_kda_decode (conv update and recurrence, decode)
  kKdaPrefill,      ///< Kimi delta attention: flashkda_fwd (the chunked delta rule, prefill)
  kNone             ///< not from a table (a modelled cost, e.g. bytes over bandwidth)
};

/// How a time was obtained from the table's measured cells.
enum class LookupHow : uint8_t {
  kExact,         ///< every axis on a measured point
  kInterpolated,  ///< between measured points on every axis
  kClamped,       ///< some axis outside the table; the edge was used
  kExtrapolated,  ///< some axis beyond the table, scaled by a stated rule
  kApproximated,  ///< no table covers the shape; the nearest supported one was scaled
  // Added after the first sketch:
  kEnvelope,  ///< on measured points, but a cell above a larger m's latency: that (lower) cell was used
  kMissing    ///< the table is not loaded (its pack part is missing): `us` is NaN, never a silent zero
};

/// Severity order for combining provenance: exact < envelope < interpolated < clamped <
/// extrapolated < approximated < missing.
int lookup_how_rank(LookupHow how);

const char* kernel_table_name(KernelTable table);
const char* kernel_dtype_name(KernelDtype dtype);  ///< "bf16", "fp8", "fp8_block", ...
const char* lookup_how_name(LookupHow how);

/// One looked-up kernel time. `cells` are 0-based data-row indices of the table's CSV
/// (the line number is index + 2), up to 8 (a GEMM between measured (n, k) uses 4
/// corners x 2 values of m); -1 unused. Provenance costs nothing until written out.
struct KernelTime {
  double us = 0;
  KernelTable table = KernelTable::kNone;
  LookupHow how = LookupHow::kExact;
  int32_t cells[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
  KernelDtype dtype = KernelDtype::kBf16;  ///< the table's dtype (weights, or KV cache for attention)
  /// > 0: a table outlier. The lower-precision table asked for (`outlier_dtype`) gave
  /// this time, slower than BF16 for the same work, which breaks physics; the BF16 time
  /// (`us`, from the BF16 table's `cells`) is used instead.
  double outlier_us = 0;
  KernelDtype outlier_dtype = KernelDtype::kBf16;
};

/// `low` (a lookup in a lower-precision table) unless the BF16 lookup of the same work
/// is faster: then `bf16`, marked as a table outlier. A lower precision is never priced
/// slower than BF16 on the same GPU (docs/KERNELS.md, "Outliers").
KernelTime no_slower_than_bf16(const KernelTime& low, const KernelTime& bf16);

/// Which shapes a pack measures (for the catalogue and for warnings).
struct KernelCoverage {
  std::vector<int> attention_head_dims;
  std::vector<KernelDtype> gemm_dtypes;
  std::vector<KernelDtype> kv_dtypes;
  std::vector<int> allreduce_tps;
  std::vector<KernelDtype> moe_dtypes;
  /// MoE shapes measured: the experts' dtype, hidden, intermediate, experts, top-k.
  struct MoeShape {
    KernelDtype dtype;
    int hidden, intermediate, experts, topk;
  };
  /// Filled from a loaded database (KernelDb::coverage); the build's catalogue lists the
  /// shapes only in its JSON text (KernelSetInfo::coverage_json), which the module carries as is.
  std::vector<MoeShape> moe_shapes;
  bool has_mla = false;
  bool has_gdn = false;  ///< gated DeltaNet (linear attention) tables
  bool has_dsa = false;  ///< DeepSeek sparse attention (DeepSeek-V3.2) module tables
  bool has_kda = false;  ///< Kimi delta attention (Kimi-Linear) tables
};

/// A gated DeltaNet layer's geometry per GPU (heads after TP), as the GDN tables key it.
struct GdnShape {
  int d_conv = 4;        ///< linear_conv_kernel_dim
  int head_k_dim = 128;  ///< linear_key_head_dim
  int head_v_dim = 128;  ///< linear_value_head_dim
  int k_heads = 0;       ///< linear_num_key_heads / tp
  int v_heads = 0;       ///< linear_num_value_heads / tp
  int d_model = 0;       ///< hidden_size (the measured shapes name their model's; the kernels do not read it)
};

/// A pack file's bytes (not owned).
struct PackBytes {
  const uint8_t* data;
  size_t size;
};

struct MeasuredTable;

/// Where a lookup's y falls among a table's measured values, found once (the kernels'
/// interpolation reads it; opaque to callers): on row `row`, below the first (`row` the
/// first), beyond the last (`row` the last, y0 the one before if `has_before`), or between
/// rows row - 1 and row (at y0 and y1).
struct GridSpot {
  enum Kind : uint8_t { kExact, kBelow, kBeyond, kBetween } kind = kExact;
  bool has_before = false;
  uint32_t row = 0;
  double y0 = 0, y1 = 0;
};

/// The decode table's rows' values at each KV length a DecodeAttentionRow read, kept
/// across a simulation's steps: a row's value at a KV length does not depend on the batch
/// (only the interpolation between two rows does), and the rows read change only when the
/// batch crosses a measured batch size, so a KV length is interpolated along a row once,
/// not once per step. One per KernelDb and attention shape (a serving plan).
class DecodeKvSpots {
 public:
  struct Slot {
    uint32_t node = UINT32_MAX;  ///< the row whose value `us` is; UINT32_MAX: none
    double us = 0;
  };
  /// The 4 slots of `kv_len` (the KV dtype's table and bf16's, each at the row and the row
  /// before), or null for a length that is not a whole number >= 0. Direct-mapped on the
  /// length (at most kEntries lengths kept; another length in a slot takes it over).
  Slot* at(double kv_len);

 private:
  static constexpr size_t kEntries = size_t{1} << 17;  ///< a power of two
  struct Entry {
    double kv = -1;  ///< the length the slots are for; -1: none
    Slot slots[4];
  };
  std::vector<Entry> entries_;
};

/// Decode attention at one batch size and head configuration for many KV lengths (a
/// serving step's decodes): us(kv) is KernelDb::decode_attention(batch, kv, ...).us to the
/// bit, with the table searches done once (and with `spots`, the KV lengths' searches
/// kept across steps). Valid while its KernelDb lives.
class DecodeAttentionRow {
 public:
  double us(double kv_len, DecodeKvSpots* spots = nullptr) const;

 private:
  friend class KernelDb;
  struct Part {
    const MeasuredTable* table = nullptr;
    GridSpot spot;
    double scale = 1;
    bool proportional_batch = false;  ///< beyond the largest batch: proportional (module tables), else linear
    bool missing = true;              ///< no table or no measured shape: NaN, as a missing lookup
    bool zero = false;                ///< arguments a lookup answers with 0
  };
  double part_us(const Part& p, double kv_len, DecodeKvSpots::Slot* slots) const;
  Part low_, bf16_;  ///< the KV cache's dtype, and bf16 to compare with when it is not bf16
  bool compare_ = false;
  double batch_ = 0;
};

/// The last two decode rows a simulation searched (KernelDb::decode_attention_row by batch, for
/// one attention shape): its steps keep their batch or change it by a request or two, and a
/// sliding-window model prices two attention layers a step at the same batch.
struct DecodeRowCache {
  struct Entry {
    double batch = -1;  ///< -1: empty
    DecodeAttentionRow row;
  };
  Entry entries[2];
  unsigned next = 0;  ///< the entry replaced next
};

/// The kernel tables of one GPU and vLLM version.
class KernelDb {
 public:
  /// Decodes a pack; errors name `gpu` (e.g. "The kernel pack for B200 vllm-0.24.0
  /// is corrupt: ...") and never crash on truncated or hostile bytes.
  static Expected<std::shared_ptr<const KernelDb>> unpack(const uint8_t* data, size_t size);
  /// Decodes several parts of one GPU and version (e.g. gemm-bf16, attention-bf16,
  /// allreduce) into one database; they must name the same GPU and version.
  static Expected<std::shared_ptr<const KernelDb>> unpack_parts(const std::vector<PackBytes>& parts);

  /// Whether the table of `table` and `dtype` is loaded (allreduce: dtype kBf16).
  /// A lookup on a table that is not loaded gives how = kMissing and us = NaN.
  bool has(KernelTable table, KernelDtype dtype) const;
  /// The parts decoded, e.g. {"allreduce", "attention-bf16", "gemm-bf16"}.
  const std::vector<std::string>& parts() const;

  const GpuSpec& gpu() const;
  const std::string& version() const;  ///< "vllm-0.14.0"
  const KernelCoverage& coverage() const;

  /// Y = X W, X m x k, W k x n, weights of `dtype`.
  KernelTime gemm(KernelDtype dtype, double m, double n, double k) const;
  /// One decode kernel over `batch` sequences each with `kv_len` cached tokens
  /// (includes writing the new token's K/V); heads are per GPU.
  KernelTime decode_attention(double batch, double kv_len, int heads, int kv_heads, int head_dim,
                              KernelDtype kv_dtype) const;
  /// decode_attention at `batch` for any KV length, searched once (DecodeAttentionRow).
  DecodeAttentionRow decode_attention_row(double batch, int heads, int kv_heads, int head_dim,
                                          KernelDtype kv_dtype) const;
  /// One prefill kernel over `batch` sequences of `seq` tokens, no cached prefix.
  KernelTime prefill_attention(double batch, double seq, int heads, int kv_heads, int head_dim,
                               KernelDtype kv_dtype) const;
  /// One CUDA-graph custom all-reduce of `elements` bf16 values over `tp` GPUs; 0 at tp 1.
  KernelTime allreduce(int tp, double elements) const;
  /// One fused-MoE kernel for `tokens` tokens (power-law routing, docs/KERNELS.md).
  KernelTime moe(KernelDtype dtype, double tokens, int hidden, int intermediate, int experts, int topk, int moe_tp,
                 int moe_ep) const;
  /// An attention module's time, heads per GPU: `table` kMlaPrefill or kMlaDecode (MLA,
  /// DeepSeek-style), kDsaPrefill or kDsaDecode (DeepSeek sparse attention, DeepSeek-V3.2);
  /// `length` the sequence (prefill) or the KV length (decode). Bilinear in batch and length;
  /// beyond the longest length MLA prefill grows quadratically, the others linearly.
  KernelTime attention_module(KernelTable table, double batch, double length, int heads, KernelDtype kv_dtype) const;
  /// attention_module(kind, batch, tokens, heads, kv_dtype).us at `batch` for any `tokens`,
  /// searched once (a decode step's requests: kMlaDecode or kDsaDecode).
  DecodeAttentionRow attention_module_row(KernelTable kind, double batch, int heads, KernelDtype kv_dtype) const;
  KernelTime mla_prefill(double batch, double seq, int heads, KernelDtype kv_dtype) const {
    return attention_module(KernelTable::kMlaPrefill, batch, seq, heads, kv_dtype);
  }
  KernelTime mla_decode(double batch, double kv_len, int heads, KernelDtype kv_dtype) const {
    return attention_module(KernelTable::kMlaDecode, batch, kv_len, heads, kv_dtype);
  }
  /// Gated DeltaNet kernels (docs/KERNELS.md, "Lookup rules"): `table` one of the four GDN
  /// tables; decode at `batch` sequences (`seq` ignored), prefill at `batch` sequences of `seq`
  /// tokens. A head geometry not measured: the nearest, scaled by the work (approximated).
  KernelTime gdn(KernelTable table, double batch, double seq, const GdnShape& shape) const;

  /// "gemm bf16 m=64..128 n=8192 k=8192 (rows 1203, 1204)" for the breakdown.
  std::string describe(const KernelTime& t) const;

  /// The same database (its tables shared, not copied) with lookup memos of its own: the
  /// memos are not thread-safe, so each thread that prices in parallel reads its own copy.
  std::shared_ptr<const KernelDb> with_own_memo() const;

  struct Impl;
  explicit KernelDb(std::unique_ptr<Impl> impl);
  ~KernelDb();

 private:
  /// decode_attention and prefill_attention (`table` says which), through the lookup memo.
  KernelTime attention_lookup(KernelTable table, double batch, double length, int heads, int kv_heads, int head_dim,
                              KernelDtype kv_dtype) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace stepcalc
