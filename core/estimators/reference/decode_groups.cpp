// SPDX-License-Identifier: Apache-2.0
#include "estimators/reference/decode_groups.h"

#include <algorithm>

namespace stepcalc {

void DecodeKvGroups::reset(size_t requests) {
  if (groups_.size() < requests) groups_.resize(requests);
  size_ = 0;
  indexed_ = false;
  unsigned bits = 4;
  while ((size_t{1} << bits) < 2 * requests) ++bits;
  shift_ = 64 - bits;
  mask_ = (size_t{1} << bits) - 1;
  if (slots_.size() < mask_ + 1) slots_.resize(mask_ + 1);
}

void DecodeKvGroups::index_all() {
  std::fill(slots_.begin(), slots_.begin() + static_cast<std::ptrdiff_t>(mask_ + 1), 0u);
  for (size_t g = 0; g < size_; ++g) {
    size_t s = slot_of(groups_[g].kv_len);
    while (slots_[s] != 0) s = (s + 1) & mask_;
    slots_[s] = static_cast<uint32_t>(g + 1);
  }
  indexed_ = true;
}

}  // namespace stepcalc
