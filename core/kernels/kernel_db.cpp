// SPDX-License-Identifier: Apache-2.0
// KernelDb: decoding and merging packs, coverage, names and provenance text. The
// lookups are in kernel_lookup_dense.cpp (GEMM, attention, all-reduce) and
// kernel_lookup_sparse.cpp (MoE, MLA).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "base/enum_table.h"
#include "kernels/kernel_db_impl.h"
#include "kernels/kernel_pack.h"

namespace stepcalc {

const char* kernel_table_name(KernelTable table) {
  static const char* const kNames[] = {"gemm",       "decode_attention", "prefill_attention", "allreduce",
                                       "moe",        "mla_prefill",      "mla_decode",        "gdn_conv_decode",
                                       "gdn_decode", "gdn_conv_prefill", "gdn_prefill",       "dsa_prefill",
                                       "dsa_decode", "kda_decode",       "kda_prefill",       "none"};
  return enum_entry(kNames, table, "none");
}

const char* lookup_how_name(LookupHow how) {
  static const char* const kNames[] = {"exact",        "interpolated", "clamped", "extrapolated",
                                       "approximated", "envelope",     "missing"};
  return enum_entry(kNames, how, "missing");
}

int lookup_how_rank(LookupHow how) {
  // exact 0 < envelope 1 < interpolated 2 < clamped 3 < extrapolated 4 < approximated 5 < missing 6
  static const int kRanks[] = {0, 2, 3, 4, 5, 1, 6};
  return enum_entry(kRanks, how, 6);
}

KernelTime kernel_time(const Sample& s, KernelTable table, KernelDtype dtype) {
  KernelTime t;
  t.us = s.us;
  t.table = table;
  t.how = s.how;
  t.dtype = dtype;
  std::copy(std::begin(s.cells), std::end(s.cells), std::begin(t.cells));
  return t;
}

KernelTime missing_time(KernelTable table, KernelDtype dtype) {
  KernelTime t;
  t.us = std::numeric_limits<double>::quiet_NaN();
  t.table = table;
  t.how = LookupHow::kMissing;
  t.dtype = dtype;
  return t;
}

namespace {

// Small lists: linear membership and an insertion sort keep the Wasm module smaller
// than std::set / std::sort would.
template <typename T, typename Same>
void add_unique(std::vector<T>& list, const T& item, Same same) {
  for (const T& x : list) {
    if (same(x, item)) return;
  }
  list.push_back(item);
}

template <typename T, typename Less>
void insertion_sort(std::vector<T>& v, Less less) {
  for (size_t i = 1; i < v.size(); ++i) {
    T item = v[i];
    size_t j = i;
    for (; j > 0 && less(item, v[j - 1]); --j) v[j] = v[j - 1];
    v[j] = item;
  }
}

KernelCoverage coverage_of(const KernelDb::Impl& db) {
  KernelCoverage c;
  auto same = [](auto a, auto b) { return a == b; };
  auto same_shape = [](const KernelCoverage::MoeShape& a, const KernelCoverage::MoeShape& b) {
    return a.dtype == b.dtype && a.hidden == b.hidden && a.intermediate == b.intermediate && a.experts == b.experts &&
           a.topk == b.topk;
  };
  for (int k = 0; k < kKernelTableCount; ++k) {
    for (int d = 0; d < kKernelDtypeCount; ++d) {  // in KernelDtype's order: the dtype lists come out sorted
      const MeasuredTable* t = db.tables[k][d].get();
      if (t == nullptr) continue;
      const KernelDtype dtype = static_cast<KernelDtype>(d);
      switch (t->kind) {
        case KernelTable::kGemm:
          add_unique(c.gemm_dtypes, dtype, same);
          break;
        case KernelTable::kDecodeAttention:
        case KernelTable::kPrefillAttention:
          add_unique(c.kv_dtypes, dtype, same);
          for (int64_t v : t->levels[0].value) add_unique(c.attention_head_dims, static_cast<int>(v), same);
          break;
        case KernelTable::kAllreduce:
          for (int64_t v : t->levels[0].value) add_unique(c.allreduce_tps, static_cast<int>(v), same);
          break;
        case KernelTable::kMoe:
          add_unique(c.moe_dtypes, dtype, same);
          // Levels: hidden, inter, experts, topk, ...: one shape per topk entry.
          for (size_t i = 0; t->levels.size() > 4 && i < t->levels[3].value.size(); ++i) {
            const uint32_t e = t->levels[3].parent[i], n = t->levels[2].parent[e], h = t->levels[1].parent[n];
            add_unique(c.moe_shapes,
                       {dtype, static_cast<int>(t->levels[0].value[h]), static_cast<int>(t->levels[1].value[n]),
                        static_cast<int>(t->levels[2].value[e]), static_cast<int>(t->levels[3].value[i])},
                       same_shape);
          }
          break;
        case KernelTable::kMlaPrefill:
        case KernelTable::kMlaDecode:
          c.has_mla = true;
          break;
        case KernelTable::kDsaPrefill:
        case KernelTable::kDsaDecode:
          c.has_dsa = true;
          break;
        case KernelTable::kKdaDecode:
        case KernelTable::kKdaPrefill:
          c.has_kda = true;
          break;
        default:
          c.has_gdn = true;
      }
    }
  }
  insertion_sort(c.attention_head_dims, [](int a, int b) { return a < b; });
  insertion_sort(c.allreduce_tps, [](int a, int b) { return a < b; });
  insertion_sort(c.moe_shapes, [](const KernelCoverage::MoeShape& a, const KernelCoverage::MoeShape& b) {
    if (a.dtype != b.dtype) return a.dtype < b.dtype;
    if (a.hidden != b.hidden) return a.hidden < b.hidden;
    if (a.intermediate != b.intermediate) return a.intermediate < b.intermediate;
    if (a.experts != b.experts) return a.experts < b.experts;
    return a.topk < b.topk;
  });
  return c;
}

// The key column names each table kind must have, in order (the lookups rely on them).
bool has_expected_keys(const MeasuredTable& t) {
  static const char* const kKeys[kKernelTableCount][8] = {
      {"n", "k", "m"},
      {"head_dim", "kv_heads", "heads", "batch", "cached_tokens"},
      {"head_dim", "kv_heads", "heads", "batch", "seq"},
      {"tp", "elements"},
      {"hidden", "inter", "experts", "topk", "moe_tp", "moe_ep", "tokens"},
      {"heads", "batch", "seq"},
      {"heads", "batch", "cached_tokens"},
      {"d_conv", "head_k_dim", "head_v_dim", "k_heads", "v_heads", "d_model", "batch"},
      {"d_conv", "head_k_dim", "head_v_dim", "k_heads", "v_heads", "d_model", "batch"},
      {"d_conv", "head_k_dim", "head_v_dim", "k_heads", "v_heads", "d_model", "batch", "seq"},
      {"d_conv", "head_k_dim", "head_v_dim", "k_heads", "v_heads", "d_model", "batch", "seq"},
      {"heads", "batch", "seq"},
      {"heads", "batch", "cached_tokens"},
      {"d_conv", "head_k_dim", "head_v_dim", "k_heads", "v_heads", "d_model", "batch"},
      {"d_conv", "head_k_dim", "head_v_dim", "k_heads", "v_heads", "d_model", "batch", "seq"}};
  const int k = static_cast<int>(t.kind);
  if (k >= kKernelTableCount) return false;
  size_t n = 0;
  while (n < 8 && kKeys[k][n] != nullptr) ++n;
  if (t.keys.size() != n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (t.keys[i] != kKeys[k][i]) return false;
  }
  return true;
}

}  // namespace

KernelDb::KernelDb(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KernelDb::~KernelDb() = default;

std::shared_ptr<const KernelDb> KernelDb::with_own_memo() const {
  auto impl = std::make_unique<Impl>();
  impl->gpu = impl_->gpu;
  impl->version = impl_->version;
  impl->parts = impl_->parts;
  for (int k = 0; k < kKernelTableCount; ++k)
    for (int d = 0; d < kKernelDtypeCount; ++d) impl->tables[k][d] = impl_->tables[k][d];
  return std::make_shared<KernelDb>(std::move(impl));
}

Expected<std::shared_ptr<const KernelDb>> KernelDb::unpack(const uint8_t* data, size_t size) {
  return unpack_parts({PackBytes{data, size}});
}

Expected<std::shared_ptr<const KernelDb>> KernelDb::unpack_parts(const std::vector<PackBytes>& parts) {
  std::vector<DecodedPack> decoded;
  for (const PackBytes& bytes : parts) {
    auto pack = decode_pack(bytes.data, bytes.size);
    if (!pack) return pack.error();
    decoded.push_back(std::move(pack).value());
  }
  std::vector<const DecodedPack*> list;
  for (const DecodedPack& p : decoded) list.push_back(&p);
  return join_packs(list);
}

Expected<std::shared_ptr<const KernelDb>> join_packs(const std::vector<const DecodedPack*>& packs) {
  auto impl = std::make_unique<KernelDb::Impl>();
  if (packs.empty()) return make_error("kernels_not_loaded", "", "No kernel pack given.");
  for (const DecodedPack* pack : packs) {
    const DecodedPack& p = *pack;
    const std::string who = "The kernel pack for " + p.gpu + " " + p.version + " (" + p.part + ")";
    const GpuSpec* gpu = find_gpu_spec(p.gpu);
    if (gpu == nullptr || gpu->name != p.gpu) {
      return make_error("corrupt_kernels", "",
                        who + " names a GPU this build does not know; known: " + gpu_spec_names() + ".");
    }
    if (impl->version.empty()) {
      impl->gpu = *gpu;
      impl->version = p.version;
    } else if (impl->gpu.name != p.gpu || impl->version != p.version) {
      return make_error("corrupt_kernels", "",
                        who + " cannot join the packs for " + impl->gpu.name + " " + impl->version + ".");
    }
    for (const auto& t : p.tables) {
      if (!has_expected_keys(*t)) {
        return make_error("corrupt_kernels", "", who + " is corrupt: table " + t->csv + " has unexpected columns.");
      }
      auto& slot = impl->tables[static_cast<int>(t->kind)][static_cast<int>(t->dtype)];
      if (slot) return make_error("corrupt_kernels", "", who + " repeats table " + t->csv + ".");
      slot = t;
    }
    if (std::find(impl->parts.begin(), impl->parts.end(), p.part) != impl->parts.end()) {
      return make_error("corrupt_kernels", "", who + " was given twice.");
    }
    impl->parts.push_back(p.part);
  }
  insertion_sort(impl->parts, [](const std::string& a, const std::string& b) { return a < b; });
  return std::shared_ptr<const KernelDb>(std::make_shared<KernelDb>(std::move(impl)));
}

const GpuSpec& KernelDb::gpu() const { return impl_->gpu; }
const std::string& KernelDb::version() const { return impl_->version; }
const KernelCoverage& KernelDb::coverage() const {
  // Computed on first use: the Wasm module never asks, and so never carries the code.
  if (!impl_->coverage) impl_->coverage = std::make_unique<KernelCoverage>(coverage_of(*impl_));
  return *impl_->coverage;
}
const std::vector<std::string>& KernelDb::parts() const { return impl_->parts; }

bool KernelDb::has(KernelTable table, KernelDtype dtype) const { return impl_->table(table, dtype) != nullptr; }

const char* kernel_dtype_name(KernelDtype dtype) {
  static const char* const kNames[] = {"bf16", "fp8", "fp8_block", "nvfp4", "mxfp4", "int4"};
  return enum_entry(kNames, dtype, "bf16");
}

KernelTime no_slower_than_bf16(const KernelTime& low, const KernelTime& bf16) {
  if (low.dtype == KernelDtype::kBf16 || low.how == LookupHow::kMissing || bf16.how == LookupHow::kMissing ||
      !(bf16.us < low.us))
    return low;
  KernelTime out = bf16;
  out.outlier_us = low.us;
  out.outlier_dtype = low.dtype;
  return out;
}

std::string KernelDb::describe(const KernelTime& t) const {
  if (t.table == KernelTable::kNone) return "not from a table";
  std::string out =
      std::string(kernel_table_name(t.table)) + " " + kernel_dtype_name(t.dtype) + " " + lookup_how_name(t.how);
  if (t.how == LookupHow::kMissing) return out + " (table not loaded)";
  std::string rows;
  for (int32_t c : t.cells) {
    if (c >= 0) rows += (rows.empty() ? "" : ", ") + std::to_string(c + 2);
  }
  const std::string dir = impl_->gpu.name;
  std::string lower;
  for (char ch : dir) lower += static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
  return out + " (bench_data/aic/" + lower + "/" + impl_->version + "/" + kernel_table_name(t.table) + ".csv lines " +
         rows + ")";
}

}  // namespace stepcalc
