// KernelDb: decoding and merging packs, coverage, names and provenance text. The
// lookups are in kernel_lookup_dense.cpp (GEMM, attention, all-reduce) and
// kernel_lookup_sparse.cpp (MoE, MLA).
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "kernels/kernel_db_impl.h"
#include "kernels/kernel_pack.h"

namespace stepcalc {

const char* kernel_table_name(KernelTable table) {
  switch (table) {
    case KernelTable::kGemm:
      return "gemm";
    case KernelTable::kDecodeAttention:
      return "decode_attention";
    case KernelTable::kPrefillAttention:
      return "prefill_attention";
    case KernelTable::kAllreduce:
      return "allreduce";
    case KernelTable::kMoe:
      return "moe";
    case KernelTable::kMlaPrefill:
      return "mla_prefill";
    case KernelTable::kMlaDecode:
      return "mla_decode";
    case KernelTable::kNone:
      break;
  }
  return "none";
}

const char* lookup_how_name(LookupHow how) {
  switch (how) {
    case LookupHow::kExact:
      return "exact";
    case LookupHow::kInterpolated:
      return "interpolated";
    case LookupHow::kClamped:
      return "clamped";
    case LookupHow::kExtrapolated:
      return "extrapolated";
    case LookupHow::kApproximated:
      return "approximated";
    case LookupHow::kEnvelope:
      return "envelope";
    case LookupHow::kMissing:
      return "missing";
  }
  return "missing";
}

int lookup_how_rank(LookupHow how) {
  switch (how) {
    case LookupHow::kExact:
      return 0;
    case LookupHow::kEnvelope:
      return 1;
    case LookupHow::kInterpolated:
      return 2;
    case LookupHow::kClamped:
      return 3;
    case LookupHow::kExtrapolated:
      return 4;
    case LookupHow::kApproximated:
      return 5;
    case LookupHow::kMissing:
      return 6;
  }
  return 6;
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

void add_unique(std::vector<KernelDtype>& list, KernelDtype d) {
  if (std::find(list.begin(), list.end(), d) == list.end()) list.push_back(d);
}

KernelCoverage coverage_of(const KernelDb::Impl& db) {
  KernelCoverage c;
  std::set<int> head_dims, tps;
  std::set<std::vector<int64_t>> moe;
  for (int k = 0; k < kKernelTableCount; ++k) {
    for (int d = 0; d < 2; ++d) {
      const MeasuredTable* t = db.tables[k][d].get();
      if (t == nullptr) continue;
      const KernelDtype dtype = static_cast<KernelDtype>(d);
      switch (t->kind) {
        case KernelTable::kGemm:
          add_unique(c.gemm_dtypes, dtype);
          break;
        case KernelTable::kDecodeAttention:
        case KernelTable::kPrefillAttention:
          add_unique(c.kv_dtypes, dtype);
          for (int64_t v : t->levels[0].value) head_dims.insert(static_cast<int>(v));
          break;
        case KernelTable::kAllreduce:
          for (int64_t v : t->levels[0].value) tps.insert(static_cast<int>(v));
          break;
        case KernelTable::kMoe:
          add_unique(c.moe_dtypes, dtype);
          // Levels: hidden, inter, experts, topk, ...: one shape per topk entry.
          for (size_t i = 0; t->levels.size() > 4 && i < t->levels[3].value.size(); ++i) {
            const uint32_t e = t->levels[3].parent[i], n = t->levels[2].parent[e], h = t->levels[1].parent[n];
            moe.insert({t->levels[0].value[h], t->levels[1].value[n], t->levels[2].value[e], t->levels[3].value[i]});
          }
          break;
        default:
          c.has_mla = true;
      }
    }
  }
  c.attention_head_dims.assign(head_dims.begin(), head_dims.end());
  c.allreduce_tps.assign(tps.begin(), tps.end());
  for (const auto& m : moe) {
    c.moe_shapes.push_back(
        {static_cast<int>(m[0]), static_cast<int>(m[1]), static_cast<int>(m[2]), static_cast<int>(m[3])});
  }
  std::sort(c.gemm_dtypes.begin(), c.gemm_dtypes.end());
  std::sort(c.kv_dtypes.begin(), c.kv_dtypes.end());
  std::sort(c.moe_dtypes.begin(), c.moe_dtypes.end());
  return c;
}

// The key column names each table kind must have, in order (the lookups rely on them).
std::vector<std::string> expected_keys(KernelTable kind) {
  switch (kind) {
    case KernelTable::kGemm:
      return {"n", "k", "m"};
    case KernelTable::kDecodeAttention:
      return {"head_dim", "kv_heads", "heads", "batch", "cached_tokens"};
    case KernelTable::kPrefillAttention:
      return {"head_dim", "kv_heads", "heads", "batch", "seq"};
    case KernelTable::kAllreduce:
      return {"tp", "elements"};
    case KernelTable::kMoe:
      return {"hidden", "inter", "experts", "topk", "moe_tp", "moe_ep", "tokens"};
    case KernelTable::kMlaPrefill:
      return {"heads", "batch", "seq"};
    case KernelTable::kMlaDecode:
      return {"heads", "batch", "cached_tokens"};
    case KernelTable::kNone:
      break;
  }
  return {};
}

}  // namespace

KernelDb::KernelDb(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KernelDb::~KernelDb() = default;

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
      if (t->keys != expected_keys(t->kind)) {
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
  std::sort(impl->parts.begin(), impl->parts.end());
  impl->coverage = coverage_of(*impl);
  return std::shared_ptr<const KernelDb>(std::make_shared<KernelDb>(std::move(impl)));
}

const GpuSpec& KernelDb::gpu() const { return impl_->gpu; }
const std::string& KernelDb::version() const { return impl_->version; }
const KernelCoverage& KernelDb::coverage() const { return impl_->coverage; }
const std::vector<std::string>& KernelDb::parts() const { return impl_->parts; }

bool KernelDb::has(KernelTable table, KernelDtype dtype) const { return impl_->table(table, dtype) != nullptr; }

std::string KernelDb::describe(const KernelTime& t) const {
  if (t.table == KernelTable::kNone) return "not from a table";
  std::string out = std::string(kernel_table_name(t.table)) + (t.dtype == KernelDtype::kFp8 ? " fp8" : " bf16") + " " +
                    lookup_how_name(t.how);
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
