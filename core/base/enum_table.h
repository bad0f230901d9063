// SPDX-License-Identifier: Apache-2.0
// One table per enum for what each value is called (or ranks, or adds to): the table
// lists the values in declaration order, so an enum's names are written once.
#pragma once

#include <cstddef>

namespace stepcalc {

/// `table[value]` for an enum whose values run 0, 1, 2, ... in the table's order;
/// `fallback` for a value past the table's end.
template <typename T, std::size_t N, typename E>
T enum_entry(const T (&table)[N], E value, T fallback) {
  const auto i = static_cast<std::size_t>(value);
  return i < N ? table[i] : fallback;
}

}  // namespace stepcalc
