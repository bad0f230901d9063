// SPDX-License-Identifier: Apache-2.0
#include "base/index_sort.h"

#include <algorithm>

namespace stepcalc {
namespace {

struct ByIndex {
  const void* context;
  IndexLess less;
  bool operator()(uint32_t a, uint32_t b) const { return less(context, a, b); }
};

}  // namespace

std::vector<uint32_t> sorted_indices(size_t n, const void* context, IndexLess less) {
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  std::sort(order.begin(), order.end(), ByIndex{context, less});
  return order;
}

}  // namespace stepcalc
