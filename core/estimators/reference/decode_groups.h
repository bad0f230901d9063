// SPDX-License-Identifier: Apache-2.0
// Decode requests grouped by KV length. A step's decode requests share the batch
// size, so two requests with the same KV length get the same attention lookup and
// the same per-request terms: each distinct length is looked up once, and the
// per-request sums still run in request order (the reference's summation order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/reference/mfu_lookup.h"

namespace stepcalc {

/// The terms of one decode request of length `kv_len`, shared by `count` requests.
struct DecodeKvGroup {
  int64_t kv_len = 0;
  int64_t count = 0;
  double flops = 0;                                   ///< attention FLOPs of one request, all layers
  double weighted = 0;                                ///< flops x MFU (the FLOP-weighted mean's numerator)
  double time_s = 0;                                  ///< flops / (peak x MFU); 0 when the MFU is not positive
  double dynamic_bytes = 0;                           ///< per GPU: the request's memory traffic beyond the weights
  double kv_read = 0, kv_write = 0, activations = 0;  ///< per GPU
  DecodeLookup lookup;
};

/// The groups of one step, reusable across steps: once its buffers have grown to
/// the largest step seen, grouping allocates nothing.
class DecodeKvGroups {
 public:
  /// Starts a step of at most `requests` decode requests.
  void reset(size_t requests);

  /// The group of `kv_len`; `*created` is true when it was added (count 0, terms unset).
  DecodeKvGroup& find_or_add(int64_t kv_len, bool* created) {
    *created = false;
    if (indexed_) {
      size_t s = slot_of(kv_len);
      for (; slots_[s] != 0; s = (s + 1) & mask_)
        if (groups_[slots_[s] - 1].kv_len == kv_len) return groups_[slots_[s] - 1];
      slots_[s] = static_cast<uint32_t>(size_ + 1);
    } else {
      for (size_t g = 0; g < size_; ++g)
        if (groups_[g].kv_len == kv_len) return groups_[g];
    }
    *created = true;
    DecodeKvGroup& added = groups_[size_++];
    added.kv_len = kv_len;
    added.count = 0;
    if (!indexed_ && size_ >= kLinearGroups) index_all();
    return added;
  }

  size_t size() const { return size_; }
  const DecodeKvGroup* begin() const { return groups_.data(); }
  const DecodeKvGroup* end() const { return groups_.data() + size_; }

 private:
  static constexpr size_t kLinearGroups = 8;  ///< below this many groups a scan beats hashing
  size_t slot_of(int64_t kv_len) const {
    return static_cast<size_t>((static_cast<uint64_t>(kv_len) * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void index_all();
  std::vector<DecodeKvGroup> groups_;  ///< grows only; the first size_ are this step's
  size_t size_ = 0;
  std::vector<uint32_t> slots_;  ///< open addressing: group index + 1, 0 empty
  unsigned shift_ = 60;
  size_t mask_ = 15;
  bool indexed_ = false;
};

/// What a simulation's decode pricing keeps across its steps (PricingScratch::
/// remember_decode_terms). Each running request is one token longer every step and the
/// batch size changes often, so what is kept is what does not depend on the batch: per KV
/// length its bracket on the table's KV axis, FLOPs and bytes; and, within one step, the
/// table's MFU (and `corrected`'s batch latency) along the batch at each measured KV
/// length. A group's MFU is then one interpolation between two of those: the same IEEE
/// operations as decode_mfu in the same order, so results are bit-identical with or
/// without it.
struct DecodeKvCache {
  /// The batch-independent terms of one decode request at a KV length.
  struct KvTerms {
    bool known = false;
    int clamped = 0;          ///< the KV bracket's clamp
    uint32_t i0 = 0, i1 = 0;  ///< the KV bracket
    double t = 0;
    double flops = 0, dynamic_bytes = 0, kv_read = 0, kv_write = 0, activations = 0;
  };
  /// One measured KV length's values along the batch, valid in step `step`.
  struct Column {
    uint64_t step = 0, latency_step = 0;
    bool missing = false;  ///< a corner read has no measurement
    double mfu = 0, latency_us = 0;
  };
  static constexpr int64_t kMaxKv = int64_t{1} << 18;  ///< longer KV lengths are priced without it
  uint64_t setup = 0;                                  ///< the setup the terms belong to (0: none yet)
  uint64_t step = 0;                                   ///< the current step's stamp
  std::vector<KvTerms> by_kv;
  std::vector<Column> columns;
};

}  // namespace stepcalc
