// SPDX-License-Identifier: Apache-2.0
// KernelDb's insides, shared by the files that implement it (kernel_db.cpp, the
// lookup files). Internal to core/kernels/.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel_db.h"
#include "kernels/kernel_pack.h"
#include "kernels/measured_table.h"

namespace stepcalc {

constexpr int kKernelTableCount = static_cast<int>(KernelTable::kNone);

/// The fused-MoE shapes last matched to a table's nearest measured shape (a search of every
/// shape with six logarithms each, per lookup the memo misses: a model asks for one shape, in
/// its dtype and in BF16, at every token count). Not thread-safe, as the memo below.
struct MoeShapeCache {
  struct Entry {
    const MeasuredTable* table = nullptr;
    double want[6] = {};
    int64_t best = -1;  ///< level-5 entry of the nearest shape, -1: none
    double distance = 0;
    double keys[6] = {};
  };
  Entry entries[4];
  unsigned next = 0;  ///< the entry replaced next
};

struct KernelDb::Impl {
  GpuSpec gpu;
  std::string version;
  std::vector<std::string> parts;
  mutable std::unique_ptr<KernelCoverage> coverage;                                   ///< computed on first use
  std::shared_ptr<const MeasuredTable> tables[kKernelTableCount][kKernelDtypeCount];  ///< by kind and dtype

  /// A lookup's arguments: what is asked (with the dtype) and up to five numbers.
  struct MemoKey {
    int32_t what = -1;
    double x[5] = {0, 0, 0, 0, 0};
  };
  /// Lookups already answered: a serving simulation asks the same shapes step after step
  /// (interpolating the tables was half of a plan's time). Direct-mapped: a key replaces the
  /// entry it maps to, so memory stays bounded; the answer is the lookup's, bit for bit.
  /// Not thread-safe: a thread that prices beside others reads a copy with its own
  /// (KernelDb::with_own_memo; the planner's threads, docs/PLAN.md).
  struct MemoEntry {
    MemoKey key;
    KernelTime time;
  };
  static constexpr size_t kMemoSize = 4096;
  mutable std::unique_ptr<MemoEntry[]> memo;  ///< kMemoSize entries, made by the first lookup
  mutable MoeShapeCache moe_shapes;

  /// The memo's entry for `key`: holding the answer when `entry->key` equals `key`, else the
  /// slot to keep it in (KernelDb lookups: `if (hit) return; ...; return keep(slot, answer)`).
  [[gnu::noinline]] MemoEntry* recall(const MemoKey& key) const;  // one copy of the hash, not one per lookup
  static KernelTime keep(MemoEntry* slot, const MemoKey& key, const KernelTime& t) {
    slot->key = key;
    slot->time = t;
    return t;
  }
  static bool holds(const MemoEntry* slot, const MemoKey& key) {
    return slot->key.what == key.what && std::memcmp(slot->key.x, key.x, sizeof key.x) == 0;
  }

  const MeasuredTable* table(KernelTable kind, KernelDtype dtype) const {
    const int k = static_cast<int>(kind);
    const int d = static_cast<int>(dtype);
    return k < kKernelTableCount && d < kKernelDtypeCount ? tables[k][d].get() : nullptr;
  }
};

/// One database from decoded packs of one GPU and version (what unpack_parts and the
/// registry share). Errors: corrupt_kernels naming the GPU, version and part.
Expected<std::shared_ptr<const KernelDb>> join_packs(const std::vector<const DecodedPack*>& packs);

/// A KernelTime from a Sample of `table`.
KernelTime kernel_time(const Sample& s, KernelTable table, KernelDtype dtype);

/// The answer for a table that is not loaded: NaN, how = kMissing.
KernelTime missing_time(KernelTable table, KernelDtype dtype);

}  // namespace stepcalc
