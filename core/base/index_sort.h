// SPDX-License-Identifier: Apache-2.0
// One sort for the module's sorts of records. std::sort instantiated per record type and
// comparator costs the first-view Wasm module about 1 KB gzipped each; the sorts here share
// one instantiation, ordering indices through a comparator given as a function pointer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stepcalc {

/// Whether record `a` of `context` goes before record `b` (a strict weak order).
using IndexLess = bool (*)(const void* context, uint32_t a, uint32_t b);

/// The indices 0 .. n-1 ordered by `less` (records that compare equal in any order: give a
/// total order where the order matters). n < 2^32.
std::vector<uint32_t> sorted_indices(size_t n, const void* context, IndexLess less);

}  // namespace stepcalc
