// SPDX-License-Identifier: Apache-2.0
// The reference step model "blis-v2" (spec: docs/REFERENCE-MODEL.md). Every
// expression keeps the reference's order of IEEE double operations, because the
// integer step time must match it exactly; the build uses -ffp-contract=off.
// One kernel prices every detail level: the breakdown is written only when asked
// for, from the very numbers the summary is made of.
#include "estimators/reference/step_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "estimators/reference/corrected.h"
#include "estimators/reference/gemm_times.h"
#include "estimators/reference/warnings.h"

// The serving simulation's decode path is built for size in the first-view Wasm module
// (clang's minsize: -Oz for that function within the -O2 pricing); natively it is -O3 like
// the rest.
#if defined(__EMSCRIPTEN__)
#define STEPCALC_WASM_SMALL __attribute__((minsize, noinline))
#else
#define STEPCALC_WASM_SMALL
#endif

namespace stepcalc {

const char* gemm_kind_name(int kind) {
  static const char* const kNames[kNumGemmKinds] = {"q", "k", "v", "o", "gate", "up", "down"};
  return kind >= 0 && kind < kNumGemmKinds ? kNames[kind] : "?";
}

int64_t round_half_away(double us) { return static_cast<int64_t>(std::round(us)); }

namespace {

constexpr int kNumPrefillBuckets = 8;  ///< 512, 1024, ... 65536

double attn_flops(const ModelConstants& d, double batch, double seq) {
  return 2 * d.heads * batch * seq * d.head_dim + 2 * d.heads * batch * seq * d.head_dim;
}

/// mem(seq, newT) of the reference, split by kind; `dynamic` is total - weights.
struct RequestBytes {
  double growth, access, activations, dynamic;
};

RequestBytes request_bytes(const ModelConstants& d, double seq, double new_tokens) {
  const bool one = new_tokens == 1;  // QUIRK: also a 1-token prefill
  RequestBytes b;
  b.growth = d.kv_bytes_per_token * new_tokens;
  b.access = d.kv_bytes_per_token * seq * (one ? 0.80 : 0.92);
  b.activations = d.layers * d.hidden * d.bpp * new_tokens * (one ? 0.75 : 0.85);
  const double total = b.activations + b.access + b.growth + d.weights_bytes;
  b.dynamic = total - d.weights_bytes;
  return b;
}

int prefill_bucket_index(int64_t tokens) {
  int index = 0;
  for (int64_t bucket = 512; bucket < tokens && bucket < 65536; bucket *= 2) ++index;
  return index;
}

/// A group's attention terms from its FLOPs `f` and MFU `mfu` (the table's), or with
/// `decode_attention_latency` (`share` set) from its share of the batch's kernel latency
/// `latency_us`: under the harmonic mean its time is that share.
void attention_terms(const PricingSetup& s, const DecodeLatencyShare* share, double latency_us, double f, double mfu,
                     DecodeKvGroup* g) {
  const double peak = s.constants.peak_flops;
  const bool harmonic = s.corrected.has(kDecodeHarmonicMean);
  g->flops = f;
  if (share != nullptr) {
    const double share_s = share->of(latency_us);
    if (harmonic) {  // the sum of the requests' times is all the step reads
      g->time_s = f > 0 ? share_s : 0;
      g->weighted = 0;
      return;
    }
    mfu = decode_share_mfu(f, share_s, peak);
  }
  g->weighted = f * mfu;
  // Only the harmonic mean sums the requests' times (a division each, worth skipping).
  g->time_s = harmonic && mfu > 0 ? f / (peak * mfu) : 0;
}

/// The terms of one decode request at the group's KV length.
void decode_terms(const PricingSetup& s, const DecodeLatencyShare* share, const Bracket& bs_bracket, double batch,
                  DecodeKvGroup* g) {
  const ModelConstants& d = s.constants;
  const double kv = static_cast<double>(g->kv_len);
  const double f = attn_flops(d, 1, kv) * d.layers;
  g->lookup = decode_mfu(*s.decode_table, bs_bracket, batch, kv);
  attention_terms(s, share, share != nullptr ? decode_batch_latency_us(*s.decode_table, batch, kv) : 0, f,
                  g->lookup.mfu, g);
  const RequestBytes b = request_bytes(d, kv, 1);
  g->dynamic_bytes = b.dynamic * d.tp_scaling;
  g->kv_write = b.growth * d.tp_scaling;
  g->kv_read = b.access * d.tp_scaling;
  g->activations = b.activations * d.tp_scaling;
}

/// decode_terms from what `c` keeps (DecodeKvCache): the same values, bit for bit; the
/// lookup carries the MFU, the brackets and the provenance the warnings read.
STEPCALC_WASM_SMALL void cached_decode_terms(const PricingSetup& s, const DecodeLatencyShare* share, const Bracket& bs,
                                             double batch, DecodeKvCache* c, DecodeKvGroup* g) {
  const ModelConstants& d = s.constants;
  const DecodeTable& t = *s.decode_table;
  DecodeKvCache::KvTerms local;
  const bool kept = g->kv_len >= 0 && g->kv_len < static_cast<int64_t>(c->by_kv.size());
  DecodeKvCache::KvTerms& k = kept ? c->by_kv[static_cast<size_t>(g->kv_len)] : local;
  const double kv = static_cast<double>(g->kv_len);
  if (!k.known) {
    const Bracket b = bracket(t.kv_axis.data(), t.kv_axis.size(), kv);
    k.i0 = static_cast<uint32_t>(b.i0), k.i1 = static_cast<uint32_t>(b.i1), k.t = b.t, k.clamped = b.clamped;
    k.flops = attn_flops(d, 1, kv) * d.layers;
    const RequestBytes rb = request_bytes(d, kv, 1);
    k.dynamic_bytes = rb.dynamic * d.tp_scaling;
    k.kv_write = rb.growth * d.tp_scaling;
    k.kv_read = rb.access * d.tp_scaling;
    k.activations = rb.activations * d.tp_scaling;
    k.known = true;
  }
  auto column = [&](size_t ik) -> DecodeKvCache::Column& {
    DecodeKvCache::Column& col = c->columns[ik];
    if (col.step != c->step) {  // as decode_mfu reads the corners along the batch
      col.step = c->step;
      const double q0 = t.cell_mfu(bs.i0, ik);
      col.missing = t.cell_row(bs.i0, ik) < 0 || (!bs.degenerate() && t.cell_row(bs.i1, ik) < 0);
      col.mfu = bs.degenerate() ? q0 : lerp(q0, t.cell_mfu(bs.i1, ik), bs.t);
    }
    return col;
  };
  DecodeLookup& out = g->lookup;  // set field by field: what the warnings read, and the brackets
  out.bs = bs;
  out.kv = Bracket{k.i0, k.i1, k.t, k.clamped};
  Provenance& p = out.provenance;
  p.exact = false, p.fallback = false, p.floor = false, p.row = -1;
  p.clamped_low = bs.clamped < 0 || k.clamped < 0;
  p.clamped_high = bs.clamped > 0 || k.clamped > 0;
  const DecodeKvCache::Column& c0 = column(k.i0);
  p.missing_corner = c0.missing;
  out.mfu = c0.mfu;
  if (!out.kv.degenerate()) {
    const DecodeKvCache::Column& c1 = column(k.i1);
    p.missing_corner |= c1.missing;
    out.mfu = lerp(c0.mfu, c1.mfu, k.t);
  }
  if (out.mfu < kMinMfu) {
    const int row = nearest_decode_row(t, batch, kv);
    p.fallback = row >= 0;
    p.floor = row < 0;
    p.row = row;
    out.mfu = row >= 0 ? t.file_mfu[row] : kMinMfu;
  }
  double latency_us = 0;
  if (share != nullptr) {  // decode_batch_latency_us, its latency along KV from the columns
    auto latency = [&](size_t ik) {
      DecodeKvCache::Column& col = c->columns[ik];
      if (col.latency_step != c->step) col.latency_step = c->step, col.latency_us = decode_latency_at_kv(t, batch, ik);
      return col.latency_us;
    };
    const size_t last = t.kv_axis.size() - 1;
    latency_us = kv >= t.kv_axis[last] ? latency(last) * kv / t.kv_axis[last]
                 : out.kv.degenerate() ? latency(k.i0)
                                       : lerp(latency(k.i0), latency(k.i1), k.t);
  }
  attention_terms(s, share, latency_us, k.flops, out.mfu, g);
  g->dynamic_bytes = k.dynamic_bytes;
  g->kv_write = k.kv_write;
  g->kv_read = k.kv_read;
  g->activations = k.activations;
}

/// Starts a step of `c` for setup `s` (the terms kept belong to one setup).
STEPCALC_WASM_SMALL DecodeKvCache* start_cached_step(const PricingSetup& s, int64_t longest_kv, DecodeKvCache* c) {
  const DecodeTable& t = *s.decode_table;
  if (t.bs_axis.empty() || t.kv_axis.empty()) return nullptr;
  if (c->setup != s.id) {
    c->setup = s.id;
    c->by_kv.clear();
    c->columns.assign(t.kv_axis.size(), DecodeKvCache::Column{});
  }
  const int64_t size = std::min(longest_kv + 1, DecodeKvCache::kMaxKv);
  if (size > static_cast<int64_t>(c->by_kv.size())) c->by_kv.resize(static_cast<size_t>(size));
  ++c->step;
  return c;
}

void price_decode(const PricingSetup& s, const Request& r, PricingScratch* scratch, bool bytes, PhaseResult* phase,
                  DecodeResult* full, bool detail, WarningSet* codes) {
  DecodeKvGroups* groups = &scratch->decode;
  const ModelConstants& d = s.constants;
  const CorrectedSettings& sw = s.corrected;
  const std::vector<DecodeRequest>& reqs = r.step.decode;
  const double batch = static_cast<double>(reqs.size());
  phase->present = true;
  const double gemm_s = gemm_set_s(s, batch, full != nullptr ? &full->gemms : nullptr, codes);
  const Bracket bs_bracket = bracket(s.decode_table->bs_axis.data(), s.decode_table->bs_axis.size(), batch);
  groups->reset(reqs.size());
  DecodeKvCache* cache = nullptr;  // the summary of a simulation's step (the breakdown looks each group up)
  if (scratch->remember_decode_terms && full == nullptr) {
    int64_t longest = 0;
    for (const DecodeRequest& q : reqs) longest = std::max(longest, q.progress_index);
    cache = start_cached_step(s, longest, &scratch->decode_terms);
  }
  DecodeLatencyShare latency_share;
  const DecodeLatencyShare* share = nullptr;
  if (sw.has(kDecodeAttentionLatency))
    latency_share = decode_latency_share(r, *s.decode_table, *s.attn, batch), share = &latency_share;
  double flops = 0, weighted = 0, dynamic = 0, per_request_s = 0;
  // Summed in registers (through the phase in memory, each request's sum waited on the last's store)
  double kv_write = phase->bytes.kv_write, kv_read = phase->bytes.kv_read, activations = phase->bytes.activations;
  DecodeKvGroup* g = nullptr;
  for (const DecodeRequest& q : reqs) {  // request order: the reference's summation order
    if (g == nullptr || g->kv_len != q.progress_index) {
      bool created = false;
      g = &groups->find_or_add(q.progress_index, &created);
      if (created) {
        if (cache != nullptr)
          cached_decode_terms(s, share, bs_bracket, batch, cache, g);
        else
          decode_terms(s, share, bs_bracket, batch, g);
      }
    }
    ++g->count;
    flops += g->flops;
    weighted += g->weighted;
    per_request_s += g->time_s;
    dynamic += g->dynamic_bytes;
    if (bytes) {
      kv_write += g->kv_write;
      kv_read += g->kv_read;
      activations += g->activations;
    }
  }
  phase->bytes.kv_write = kv_write, phase->bytes.kv_read = kv_read, phase->bytes.activations = activations;
  phase->attn_core_flops = flops;
  double attn_s = 0, effective_mfu = 0;
  if (flops > 0 && weighted / flops > 0) {
    effective_mfu = weighted / flops;
    attn_s = flops / (d.peak_flops * (weighted / flops)) * d.tp_scaling;
  }
  if (sw.has(kDecodeHarmonicMean)) {
    attn_s = per_request_s * d.tp_scaling;
    effective_mfu = attn_s > 0 ? flops * d.tp_scaling / (d.peak_flops * attn_s) : 0;
  }
  phase->attn_core_time_s = attn_s;
  phase->gemm_time_s = gemm_s;
  phase->compute_s = gemm_s + attn_s;
  phase->bytes.weights = d.weights_bytes * d.tp_scaling;
  phase->memory_s = (d.weights_bytes * d.tp_scaling + dynamic) / d.peak_bw;
  if (codes != nullptr) {
    const bool latency = sw.has(kDecodeAttentionLatency);
    for (const DecodeKvGroup& k : *groups) {
      const Provenance& p = k.lookup.provenance;
      if (p.clamped_low || p.clamped_high) codes->add(kWarnDecodeOutsideTable);
      if (p.missing_corner && !latency) codes->add(kWarnDecodeMissingCorner);
      if ((p.fallback || p.floor) && !latency) codes->add(kWarnDecodeMfuFallback);
    }
    if (groups->size() > 1 && !sw.has(kDecodeHarmonicMean)) codes->add(kWarnDecodeMfuArithmeticMean);
  }
  if (full == nullptr) return;
  full->batch_size = static_cast<int64_t>(reqs.size());
  full->attn_effective_mfu = effective_mfu;
  if (!detail) return;
  // By KV length (distinct per group, whole numbers < 2^53): the lengths sorted as doubles
  // (libc++'s one sort of doubles, which the module has anyway; a sort of the groups was
  // 1.5 KB of the first view gzipped), each group found again by its length.
  std::vector<double> lengths;
  lengths.reserve(groups->size());
  for (const DecodeKvGroup& k : *groups) lengths.push_back(static_cast<double>(k.kv_len));
  std::sort(lengths.begin(), lengths.end());
  full->attn_groups.reserve(lengths.size());
  for (double kv : lengths) {
    bool created = false;
    const DecodeKvGroup& k = groups->find_or_add(static_cast<int64_t>(kv), &created);
    full->attn_groups.push_back({k.kv_len, k.count, k.lookup});
  }
}

void price_prefill(const PricingSetup& s, const Request& r, bool bytes, PhaseResult* phase, int64_t* new_tokens,
                   PrefillResult* full, WarningSet* codes) {
  const ModelConstants& d = s.constants;
  const CorrectedSettings& sw = s.corrected;
  const bool at_length = sw.has(kPrefillAttentionLength);
  struct Bucket {
    int64_t num_requests = 0, total_new_tokens = 0;
    double tokens = 0, flops = 0, corrected_attn_s = 0;
  };
  Bucket buckets[kNumPrefillBuckets];
  phase->present = true;
  *new_tokens = 0;
  for (const PrefillRequest& q : r.step.prefill) {  // within a bucket: request order
    Bucket& b = buckets[prefill_bucket_index(q.progress_index + q.new_tokens)];
    const double n = static_cast<double>(q.new_tokens);
    const double p = static_cast<double>(q.progress_index);
    ++b.num_requests;
    b.total_new_tokens += q.new_tokens;
    b.tokens += n;
    b.flops += attn_flops(d, n, p + n) * d.layers;
    if (at_length) b.corrected_attn_s += prefill_chunk_attn_s(r, *s.attn, p, n, d.layers);
    *new_tokens += q.new_tokens;
    if (codes != nullptr && q.new_tokens == 1 && !sw.any()) codes->add(kWarnPrefillOneToken);
    if (codes != nullptr && q.new_tokens == 0) codes->add(kWarnPrefillZeroTokens);
  }
  for (int i = 0; i < kNumPrefillBuckets; ++i) {  // ascending buckets
    const Bucket& b = buckets[i];
    if (b.num_requests == 0) continue;
    const int64_t bucket = int64_t{512} << i;
    PrefillBucket* out = full != nullptr ? &full->buckets.emplace_back() : nullptr;
    const double gemm_s = gemm_set_s(s, b.tokens, out != nullptr ? &out->gemms : nullptr, codes);
    const PrefillLookup lookup = prefill_mfu(*s.attn, static_cast<double>(bucket));
    double attn_mfu = lookup.mfu;
    double attn_s = b.flops / 1.8 / (d.peak_flops * attn_mfu) * d.tp_scaling;
    if (at_length) {
      attn_s = b.corrected_attn_s * d.tp_scaling;
      attn_mfu = attn_s > 0 ? b.flops / 1.8 * d.tp_scaling / (d.peak_flops * attn_s) : 0;
    }
    phase->compute_s += gemm_s + attn_s;
    phase->gemm_time_s += gemm_s;
    phase->attn_core_time_s += attn_s;
    phase->attn_core_flops += b.flops;
    if (codes != nullptr && !at_length) {
      if (lookup.provenance.clamped_low || lookup.provenance.clamped_high) codes->add(kWarnPrefillBucketClamped);
      if (lookup.provenance.fallback || lookup.provenance.floor) codes->add(kWarnPrefillMfuFallback);
    }
    if (out == nullptr) continue;
    out->bucket = bucket;
    out->num_requests = b.num_requests;
    out->total_new_tokens = b.total_new_tokens;
    out->attn_mfu = attn_mfu;
    out->attn_core_flops = b.flops;
    out->attn_core_time_s = attn_s;
    out->attn_lookup = lookup;
  }
  if (codes != nullptr && !at_length) codes->add(kWarnPrefillBucketed);
  double dynamic = 0;
  for (const PrefillRequest& q : r.step.prefill) {
    const RequestBytes b = request_bytes(d, static_cast<double>(q.progress_index), static_cast<double>(q.new_tokens));
    dynamic += b.dynamic * d.tp_scaling;
    if (bytes) {
      phase->bytes.kv_write += b.growth * d.tp_scaling;
      phase->bytes.kv_read += b.access * d.tp_scaling;
      phase->bytes.activations += b.activations * d.tp_scaling;
    }
  }
  phase->bytes.weights = d.weights_bytes * d.tp_scaling;
  phase->memory_s = (d.weights_bytes * d.tp_scaling + dynamic) / d.peak_bw;
  if (full != nullptr) full->num_requests = static_cast<int64_t>(r.step.prefill.size());
}

/// `fused_mixed_batch`: both phases as one forward pass over all their tokens.
void price_fused(const PricingSetup& s, const Request& r, const PhaseResult& p, const PhaseResult& q, double tokens,
                 FusedPass* f) {
  const ModelConstants& d = s.constants;
  f->present = true;
  f->tokens = tokens;
  f->gemm_time_s = gemm_set_s(s, f->tokens, &f->gemms, nullptr);
  f->attn_core_time_s = p.attn_core_time_s + q.attn_core_time_s;
  f->compute_s = f->gemm_time_s + f->attn_core_time_s;
  const MemoryBytes& a = p.bytes;
  const MemoryBytes& b = q.bytes;
  const double dynamic = a.kv_read + a.kv_write + a.activations + b.kv_read + b.kv_write + b.activations;
  f->memory_s = (d.weights_bytes * d.tp_scaling + dynamic) / d.peak_bw;
  if (s.corrected.has(kTpAllreduce)) f->comm_s = allreduce_s(s.corrected, r, f->tokens);
}

/// The kernel: prices `r.step` against `s`; `full` (if given) gets the breakdown.
Expected<StepSummary> run(const PricingSetup& s, const Request& r, PricingScratch* scratch, StepResult* full,
                          bool detail) {
  const CorrectedSettings& sw = s.corrected;
  const bool fused_mode = sw.has(kFusedMixedBatch);
  StepSummary out;
  WarningSet* codes = &out.warnings;
  out.warnings = s.warnings;
  PhaseResult prefill_local, decode_local;
  PhaseResult* prefill = full != nullptr ? &full->prefill : &prefill_local;
  PhaseResult* decode = full != nullptr ? &full->decode : &decode_local;
  const bool bytes = full != nullptr || fused_mode;
  int64_t prefill_tokens = 0;
  if (!r.step.prefill.empty())
    price_prefill(s, r, bytes, prefill, &prefill_tokens, full != nullptr ? &full->prefill : nullptr, codes);
  if (!r.step.decode.empty()) {
    if (s.decode_table == nullptr)
      return make_error("no_tables", "gpu", "No decode attention table for config " + s.attn->key + ".");
    price_decode(s, r, scratch, bytes, decode, full != nullptr ? &full->decode : nullptr, detail, codes);
    out.warnings |= s.decode_warnings;
  }
  if (sw.has(kTpAllreduce)) {
    if (prefill->present) prefill->comm_s = allreduce_s(sw, r, static_cast<double>(prefill_tokens));
    if (decode->present) decode->comm_s = allreduce_s(sw, r, static_cast<double>(r.step.decode.size()));
  }
  FusedPass fused_local;
  FusedPass* fused = full != nullptr ? &full->fused : &fused_local;
  if (fused_mode && prefill->present && decode->present)
    price_fused(s, r, *prefill, *decode, static_cast<double>(prefill_tokens + r.step.decode.size()), fused);
  if (prefill->present && decode->present && !fused->present) codes->add(kWarnMixedBatchOverlap);

  const double prefill_s = prefill->time_s(), decode_s = decode->time_s();
  double hw = 0;
  if (fused->present)
    hw = fused->time_s();
  else if (prefill->present && decode->present)
    hw = std::max(prefill_s, decode_s);
  else if (prefill->present)
    hw = prefill_s;
  else if (decode->present)
    hw = decode_s;
  out.bound = !prefill->present && !decode->present                               ? StepBound::kOverhead
              : (prefill->present && (!decode->present || prefill_s >= decode_s)) ? StepBound::kPrefill
                                                                                  : StepBound::kDecode;
  out.prefill_s = prefill_s;
  out.decode_s = decode_s;
  out.step_hardware_s = hw;
  out.overhead_us = overhead_us(sw, r);
  double us = (hw + out.overhead_us / 1e6) * 1e6;
  out.total_us = us;
  if (us < 1) {
    us = 1;
    out.min_step_floor_applied = true;
    codes->add(kWarnMinStepFloor);
  }
  if (!std::isfinite(us) || us > 9e15)
    return make_error("out_of_range", "step", "The step time overflows: check the hardware constants and lengths.");
  out.step_time_us = round_half_away(us);
  if (full != nullptr) {
    full->bound = out.bound;
    full->step_hardware_s = hw;
    full->overhead_us = out.overhead_us;
    full->total_us_before_rounding = out.total_us;
    full->min_step_floor_applied = out.min_step_floor_applied;
    full->step_time_us = out.step_time_us;
    full->prefill.new_tokens = prefill_tokens;
  }
  return out;
}

}  // namespace

Expected<StepResult> price_full(const PricingSetup& s, const Request& r, PricingScratch* scratch, bool detail) {
  StepResult out;
  out.mode = r.mode;
  out.corrected = s.corrected;
  out.attn_config_model = s.attn_config_model;
  out.attn_config_used = s.attn->key;
  out.decode_mfu_tp_used = s.decode_mfu_tp_used;  // reported even without decodes
  auto summary = run(s, r, scratch, &out, detail);
  if (!summary) return summary.error();
  if (detail) out.warnings = collect_warnings(r, *s.tables, out);
  return out;
}

Expected<StepSummary> price_summary(const PricingSetup& s, const Request& r, PricingScratch* scratch) {
  return run(s, r, scratch, nullptr, false);
}

Expected<StepResult> price_step(const Request& r, const MfuTables& tables, bool detail) {
  auto setup = prepare_pricing(r, tables);
  if (!setup) return setup.error();
  PricingScratch scratch;
  return price_full(setup.value(), r, &scratch, detail);
}

}  // namespace stepcalc
