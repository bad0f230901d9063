// SPDX-License-Identifier: Apache-2.0
// Attention of one layer in the `measured` mode (rules in measured_attention.h).
#include "estimators/measured_attention.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>
#include <vector>

#include "base/index_sort.h"

namespace stepcalc {
namespace {

double d(int64_t v) { return static_cast<double>(v); }

/// DeepSeek sparse attention: the (query, key) pairs of the queries at positions 1..x, each
/// reading at most `topk` tokens.
double sparse_pairs(double x, double topk) {
  return x <= topk ? x * (x + 1) / 2 : topk * (topk + 1) / 2 + (x - topk) * topk;
}

/// DeepSeek-V3's attention projections inside the MLA (and DSA) module tables (hidden 7168,
/// q_lora_rank 1536, BF16; bench_data/aic/README.md), for `rows` tokens with `heads`
/// heads per GPU: the fused q_a + kv_a down-projection, q_b and o_proj. The model's own
/// projections are priced as its operators; the latent up-projection, norms, rotary
/// embedding and cache write stay in the module (their per-head shapes are V3's).
double deepseek_v3_projections_us(const KernelDb& db, double rows, int heads) {
  const double h = heads;
  return db.gemm(KernelDtype::kBf16, rows, 1536 + 576, 7168).us  // fused q_a + kv_a
         + db.gemm(KernelDtype::kBf16, rows, h * 192, 1536).us   // q_b
         + db.gemm(KernelDtype::kBf16, rows, 7168, h * 128).us;  // o_proj
}

/// The lookups of one step, each (phase, batch, length, prefix) once, in the order
/// first seen. Requests are recorded as they come, then merged once: sorted by key
/// (ties by arrival), so a step of many distinct lengths costs n log n (a scan of the
/// list per request was quadratic), without a hash table's code in the Wasm module.
class LookupRecorder {
 public:
  explicit LookupRecorder(AttentionCost* out) : out_(out) {}

  void add(bool prefill, double batch, double length, double prefix, double share_us, const KernelTime& kernel) {
    AttentionLookup l;
    l.prefill = prefill;
    l.batch = batch;
    l.length = length;
    l.prefix = prefix;
    l.count = 1;
    l.time_us = share_us;
    l.kernel = kernel;
    out_->lookups.push_back(l);
  }

  /// Merges the requests read at the same key into the first of them.
  void merge() {
    std::vector<AttentionLookup>& all = out_->lookups;
    const auto key = [&](uint32_t i) {
      return std::make_tuple(!all[i].prefill, all[i].batch, all[i].length, all[i].prefix);
    };
    const std::vector<uint32_t> order =
        sorted_indices(all.size(), all.data(), [](const void* context, uint32_t a, uint32_t b) {
          const auto* l = static_cast<const AttentionLookup*>(context);
          const auto ka = std::make_tuple(!l[a].prefill, l[a].batch, l[a].length, l[a].prefix);
          const auto kb = std::make_tuple(!l[b].prefill, l[b].batch, l[b].length, l[b].prefix);
          return ka < kb || (ka == kb && a < b);
        });
    // The first of each run of equal keys absorbs the others, in arrival order.
    std::vector<bool> keep(all.size(), false);
    for (size_t k = 0; k < order.size();) {
      size_t end = k + 1;
      AttentionLookup& first = all[order[k]];
      for (; end < order.size() && key(order[end]) == key(order[k]); ++end) {
        ++first.count;
        first.time_us += all[order[end]].time_us;
      }
      keep[order[k]] = true;
      k = end;
    }
    size_t w = 0;
    for (size_t r = 0; r < all.size(); ++r)
      if (keep[r]) all[w++] = all[r];
    all.resize(w);
  }

 private:
  AttentionCost* out_;
};

}  // namespace

namespace {

/// One attention kernel of a layer: decode (`length` = KV length) or prefill (`length` =
/// sequence length), less the projections an MLA module table includes (`rows` of them).
double attention_kernel_us(const MeasuredPlan& p, bool prefill, double batch, double length, double rows,
                           KernelTime* kernel) {
  const KernelDb& db = *p.db;
  const bool mla = p.attention_path == AttentionPath::kMlaModule;
  KernelTime t;
  if (mla) {  // the MLA module tables, or the DSA ones (kMlaPrefill + 6 = kDsaPrefill) with an indexer
    const int table = static_cast<int>(prefill ? KernelTable::kMlaPrefill : KernelTable::kMlaDecode);
    t = db.attention_module(static_cast<KernelTable>(table + (p.ops.attention.topk > 0 ? 6 : 0)), batch, length,
                            p.attn_heads, p.kv_dtype);
  } else if (prefill) {
    t = db.prefill_attention(batch, length, p.attn_heads, p.attn_kv_heads, p.attn_head_dim, p.kv_dtype);
  } else {
    t = db.decode_attention(batch, length, p.attn_heads, p.attn_kv_heads, p.attn_head_dim, p.kv_dtype);
  }
  if (kernel != nullptr) *kernel = t;
  const double us = t.us * p.attn_scale;
  return mla ? std::max(0.0, us - deepseek_v3_projections_us(db, rows, p.attn_heads)) : us;
}

}  // namespace

double decode_kernel_us(const MeasuredPlan& p, double batch, double kv_len, KernelTime* kernel) {
  return attention_kernel_us(p, false, batch, kv_len, batch, kernel);
}

double prefill_kernel_us(const MeasuredPlan& p, double batch, double seq, KernelTime* kernel) {
  return attention_kernel_us(p, true, batch, seq, batch * seq, kernel);
}

double attention_layer_us(const MeasuredPlan& p, const Step& step, AttentionCost* split, bool detail,
                          DecodeKvSpots* spots, DecodeRowCache* rows) {
  AttentionCost* out = detail ? split : nullptr;
  const MeasuredConstants& c = p.constants;
  const double pair_flops = p.ops.attention.flops_per_pair;
  const double kv_bytes = p.ops.attention.kv_bytes_per_token;
  double fixed = 0, decode_var = 0, prefill_var = 0, flops = 0, bytes = 0;
  KernelTime kernel;
  KernelTime* cells = out != nullptr ? &kernel : nullptr;
  std::optional<LookupRecorder> lookups;
  if (out != nullptr) lookups.emplace(out);

  // DeepSeek sparse attention: a decode reads the indexer's top-k tokens (the indexer's own
  // keys of every token are in the table's time); without it, every token.
  const double topk = d(p.ops.attention.topk), cap = topk > 0 ? topk : HUGE_VAL;
  const double batch = d(static_cast<int64_t>(step.decode.size()));
  if (batch > 0) {
    double shares = 0, last_kv = -1, last_us = 0, kv_tokens = 0;
    // Without the lookups' detail, the standard tables' row at this batch is searched once.
    // An MLA module's table includes its projections at the batch's rows: subtracted per
    // request (attention_kernel_us), found once.
    std::optional<DecodeAttentionRow> row;
    const bool mla = p.attention_path == AttentionPath::kMlaModule;
    double projections_us = 0;
    if (out == nullptr && !mla) {
#if !defined(__EMSCRIPTEN__) || defined(STEPCALC_PLAN_MODULE)
      if (rows != nullptr) {
        DecodeRowCache::Entry* kept = nullptr;
        for (DecodeRowCache::Entry& e : rows->entries) kept = e.batch == batch ? &e : kept;
        if (kept == nullptr) {
          kept = &rows->entries[rows->next];
          rows->next ^= 1;
          kept->row = p.db->decode_attention_row(batch, p.attn_heads, p.attn_kv_heads, p.attn_head_dim, p.kv_dtype);
          kept->batch = batch;
        }
        row = kept->row;
      } else {
        row = p.db->decode_attention_row(batch, p.attn_heads, p.attn_kv_heads, p.attn_head_dim, p.kv_dtype);
      }
#else
      (void)rows;
      row = p.db->decode_attention_row(batch, p.attn_heads, p.attn_kv_heads, p.attn_head_dim, p.kv_dtype);
#endif
    } else if (out == nullptr) {
      const int table = static_cast<int>(KernelTable::kMlaDecode) + (p.ops.attention.topk > 0 ? 6 : 0);
      row = p.db->attention_module_row(static_cast<KernelTable>(table), batch, p.attn_heads, p.kv_dtype);
      projections_us = deepseek_v3_projections_us(*p.db, batch, p.attn_heads);
    }
    for (const DecodeRequest& r : step.decode) {
      const double kv = d(r.progress_index);
      if (kv != last_kv || out != nullptr) {
        if (!row) {
          last_us = decode_kernel_us(p, batch, kv, cells);
        } else {
          last_us = row->us(kv, spots) * p.attn_scale;
          if (mla) last_us = std::max(0.0, last_us - projections_us);
        }
        last_kv = kv;
      }
      shares += last_us;
      kv_tokens += std::min(kv + 1, cap);
      if (out != nullptr) {
        lookups->add(false, batch, kv, 0, last_us / batch, kernel);
        flops += std::min(kv + 1, cap) * pair_flops;
        bytes += std::min(kv + 1, cap) * kv_bytes;
      }
    }
    // The table re-reads one batch's KV, so a batch whose KV fits in L2 comes from cache
    // (it implies more than the HBM delivers). In a step each layer reads its own KV from
    // HBM: at least its bytes at the effective HBM bandwidth, as every memory-bound op.
    const double hbm_us = kv_tokens * kv_bytes / c.hbm_bytes_per_s * 1e6;
    decode_var = std::max(std::max(0.0, shares / batch - c.decode_fixed_us), hbm_us);
    fixed = c.decode_fixed_us;
  }

  double chunks = 0;
  for (const PrefillRequest& r : step.prefill) chunks += r.new_tokens > 0 ? 1 : 0;
  if (chunks > 0) {
    for (const PrefillRequest& r : step.prefill) {
      if (r.new_tokens <= 0) continue;
      const double prefix = d(r.progress_index), n = d(r.new_tokens), total = prefix + n;
      double share = std::max(0.0, prefill_kernel_us(p, chunks, total, cells) - c.prefill_fixed_us) / chunks;
      if (prefix > 0) {
        share *= topk > 0 ? 1 - sparse_pairs(prefix, topk) / sparse_pairs(total, topk)  // its top-k pairs
                          : n * (2 * prefix + n) / (total * total);
        const double read_once = std::max(0.0, decode_kernel_us(p, chunks, total, nullptr) - c.decode_fixed_us);
        share = std::max(share, read_once / chunks);
      }
      prefill_var += share;
      if (out != nullptr) {
        lookups->add(true, chunks, total, prefix, share, kernel);
        flops += (topk > 0 ? sparse_pairs(total, topk) - sparse_pairs(prefix, topk) : n * (2 * prefix + n + 1) / 2) *
                 pair_flops;
        bytes += total * kv_bytes;
      }
    }
    fixed = std::max(fixed, c.prefill_fixed_us);
  }
  // On a GPU priced from its sibling's tables: decode reads KV (HBM-bound), prefill is
  // flash attention's FLOPs (compute-bound); the fixed launch cost stays.
  decode_var *= p.scale_hbm;
  prefill_var *= p.scale_bf16;
  if (split != nullptr) {
    split->fixed_us = fixed;
    split->decode_us = decode_var;
    split->prefill_us = prefill_var;
    split->flops = flops;
    split->bytes = bytes;
  }
  if (lookups) lookups->merge();
  return fixed + decode_var + prefill_var;
}

}  // namespace stepcalc
