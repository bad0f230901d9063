// SPDX-License-Identifier: Apache-2.0
// KernelDb's insides, shared by the files that implement it (kernel_db.cpp, the
// lookup files). Internal to core/kernels/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel_db.h"
#include "kernels/kernel_pack.h"
#include "kernels/measured_table.h"

namespace stepcalc {

constexpr int kKernelTableCount = static_cast<int>(KernelTable::kNone);

struct KernelDb::Impl {
  GpuSpec gpu;
  std::string version;
  std::vector<std::string> parts;
  mutable std::unique_ptr<KernelCoverage> coverage;                                   ///< computed on first use
  std::shared_ptr<const MeasuredTable> tables[kKernelTableCount][kKernelDtypeCount];  ///< by kind and dtype

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
