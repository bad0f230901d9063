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

/// The terms of the decode groups priced before, kept across steps: a simulation's
/// steps share most KV lengths with the step before (each running request is one
/// token longer), so most groups are found here instead of looked up again.
/// Direct-mapped on (setup, batch, KV length); an entry holds exactly what
/// pricing it computed, so results are bit-identical with or without it.
class DecodeTermMemo {
 public:
  /// The terms priced for (`setup`, `batch`, `kv_len`), or null.
  const DecodeKvGroup* find(uint64_t setup, int64_t batch, int64_t kv_len) const {
    if (entries_.empty()) return nullptr;
    const Entry& e = entries_[slot_of(batch, kv_len)];
    return e.setup == setup && e.batch == batch && e.terms.kv_len == kv_len ? &e.terms : nullptr;
  }
  /// Keeps `terms` (count ignored) for (`setup`, `batch`, terms.kv_len).
  void store(uint64_t setup, int64_t batch, const DecodeKvGroup& terms) {
    if (entries_.empty()) entries_.resize(kEntries);
    Entry& e = entries_[slot_of(batch, terms.kv_len)];
    e.setup = setup, e.batch = batch, e.terms = terms;
  }

 private:
  static constexpr size_t kEntries = 4096;  ///< a power of two; ~0.5 MB once used
  struct Entry {
    uint64_t setup = 0;  ///< 0: empty (setup ids start at 1)
    int64_t batch = 0;
    DecodeKvGroup terms;
  };
  static size_t slot_of(int64_t batch, int64_t kv_len) {
    const uint64_t h =
        (static_cast<uint64_t>(kv_len) + static_cast<uint64_t>(batch) * 0x9E3779B1ull) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h >> 52);  // the top 12 bits: kEntries slots
  }
  std::vector<Entry> entries_;
};

}  // namespace stepcalc
