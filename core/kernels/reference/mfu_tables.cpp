// SPDX-License-Identifier: Apache-2.0
// Typed MFU tables built from raw (CSV-shaped) tables.
#include "kernels/reference/mfu_tables.h"

#include <algorithm>

#include "kernels/embedded_data.h"

namespace stepcalc {
namespace {

Error table_error(const std::string& table, const std::string& what) {
  return make_error("bad_tables", table, "MFU table " + table + ": " + what + ".");
}

// Columns a table must have, all numeric; empty result means success.
std::string require_numeric(const RawTable& t, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const RawColumn* c = t.column(name);
    if (c == nullptr || c->is_text) return std::string("missing numeric column ") + name;
  }
  return "";
}

// Stable insertion sort: the tables are a few dozen rows, and one small loop per
// comparator keeps the Wasm module far smaller than std::sort/std::stable_sort.
template <typename T, typename Less>
void insertion_sort(std::vector<T>& v, Less less) {
  for (size_t i = 1; i < v.size(); ++i) {
    T item = std::move(v[i]);
    size_t j = i;
    for (; j > 0 && less(item, v[j - 1]); --j) v[j] = std::move(v[j - 1]);
    v[j] = std::move(item);
  }
}

std::vector<double> sorted_unique(std::vector<double> v) {
  insertion_sort(v, [](double a, double b) { return a < b; });
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

size_t index_of(const std::vector<double>& axis, double x) {
  return static_cast<size_t>(std::lower_bound(axis.begin(), axis.end(), x) - axis.begin());
}

// Reads a decimal integer at text[*pos]; false when there is none.
bool read_number(const std::string& text, size_t* pos, int64_t* out) {
  const size_t start = *pos;
  int64_t v = 0;
  while (*pos < text.size() && text[*pos] >= '0' && text[*pos] <= '9' && v < (INT64_C(1) << 40))
    v = v * 10 + (text[(*pos)++] - '0');
  *out = v;
  return *pos > start;
}

// Parses "H-Hkv-D" (and, with `tp`, a "-tpN" suffix); false when malformed.
bool parse_key(const std::string& text, int64_t* h, int64_t* hkv, int64_t* d, int64_t* tp) {
  size_t pos = 0;
  auto dash = [&](const char* sep) {
    const size_t n = std::char_traits<char>::length(sep);
    if (text.compare(pos, n, sep) != 0) return false;
    pos += n;
    return true;
  };
  if (!read_number(text, &pos, h) || !dash("-") || !read_number(text, &pos, hkv) || !dash("-") ||
      !read_number(text, &pos, d))
    return false;
  if (tp != nullptr && (!dash("-tp") || !read_number(text, &pos, tp))) return false;
  return pos == text.size();
}

Expected<GemmTable> build_gemm(const RawTable& t) {
  const std::string missing = require_numeric(t, {"m", "k", "n", "latency_us", "mfu"});
  if (!missing.empty()) return table_error(t.name, missing);
  GemmTable g;
  g.m = t.column("m")->values;
  g.k = t.column("k")->values;
  g.n = t.column("n")->values;
  g.mfu = t.column("mfu")->values;
  g.latency_us = t.column("latency_us")->values;
  for (size_t r = 0; r < t.num_rows; ++r) {
    auto pair =
        std::find_if(g.pairs.begin(), g.pairs.end(), [&](const GemmPair& p) { return p.k == g.k[r] && p.n == g.n[r]; });
    if (pair == g.pairs.end()) {
      g.pairs.push_back(GemmPair{g.k[r], g.n[r], {}, {}, {}, {}, 0});
      pair = g.pairs.end() - 1;
    }
    pair->row.push_back(static_cast<int>(r));
  }
  for (GemmPair& p : g.pairs) {
    insertion_sort(p.row, [&](int a, int b) { return g.m[a] < g.m[b]; });
    for (int r : p.row) {
      if (!p.m_axis.empty() && p.m_axis.back() == g.m[r]) return table_error(t.name, "duplicate m for one (k, n)");
      p.m_axis.push_back(g.m[r]);
      p.mfu.push_back(g.mfu[r]);
      p.latency_us.push_back(g.latency_us[r]);
      if (g.latency_us[r] > 0) p.best_flops = std::max(p.best_flops, 2 * g.m[r] * p.k * p.n / (g.latency_us[r] * 1e-6));
    }
  }
  if (g.pairs.empty()) return table_error(t.name, "no rows");
  return g;
}

Expected<PrefillTable> build_prefill(const RawTable& t, const std::string& key) {
  const std::string missing = require_numeric(t, {"seq_len", "latency_us", "mfu"});
  if (!missing.empty()) return table_error(t.name, missing);
  PrefillTable p;
  p.key = key;
  if (!parse_key(key, &p.heads, &p.kv_heads, &p.head_dim, nullptr))
    return table_error(t.name, "file name is not H-Hkv-D");
  p.file_seq = t.column("seq_len")->values;
  p.file_mfu = t.column("mfu")->values;
  const std::vector<double>& latency = t.column("latency_us")->values;
  for (size_t r = 0; r < t.num_rows; ++r) p.row.push_back(static_cast<int>(r));
  insertion_sort(p.row, [&](int a, int b) { return p.file_seq[a] < p.file_seq[b]; });
  for (int r : p.row) {
    if (!p.seq_axis.empty() && p.seq_axis.back() == p.file_seq[r]) return table_error(t.name, "duplicate seq_len");
    p.seq_axis.push_back(p.file_seq[r]);
    p.mfu.push_back(p.file_mfu[r]);
    p.latency_us.push_back(latency[r]);
  }
  if (p.seq_axis.empty()) return table_error(t.name, "no rows");
  return p;
}

Expected<DecodeTable> build_decode(const RawTable& t, const std::string& key_tp) {
  const std::string missing = require_numeric(t, {"batch_size", "kv_len", "latency_us", "mfu"});
  if (!missing.empty()) return table_error(t.name, missing);
  DecodeTable d;
  int64_t h = 0, hkv = 0, dim = 0;
  if (!parse_key(key_tp, &h, &hkv, &dim, &d.tp) || d.tp < 1) return table_error(t.name, "file name is not H-Hkv-D-tpN");
  d.key = key_tp.substr(0, key_tp.rfind("-tp"));
  d.file_bs = t.column("batch_size")->values;
  d.file_kv = t.column("kv_len")->values;
  d.file_mfu = t.column("mfu")->values;
  const std::vector<double>& latency = t.column("latency_us")->values;
  d.bs_axis = sorted_unique(d.file_bs);
  d.kv_axis = sorted_unique(d.file_kv);
  if (d.bs_axis.empty()) return table_error(t.name, "no rows");
  const size_t cells = d.bs_axis.size() * d.kv_axis.size();
  d.mfu.assign(cells, 0.0);  // an unmeasured cell reads as MFU 0 (reference behaviour)
  d.latency_us.assign(cells, 0.0);
  d.row.assign(cells, -1);
  for (size_t r = 0; r < t.num_rows; ++r) {
    const size_t cell = index_of(d.bs_axis, d.file_bs[r]) * d.kv_axis.size() + index_of(d.kv_axis, d.file_kv[r]);
    if (d.row[cell] >= 0) return table_error(t.name, "duplicate (batch_size, kv_len)");
    d.row[cell] = static_cast<int>(r);
    d.mfu[cell] = d.file_mfu[r];
    d.latency_us[cell] = latency[r];
  }
  return d;
}

}  // namespace

Expected<MfuTables> MfuTables::build(const std::vector<RawTable>& raw, const std::string& gpu) {
  MfuTables tables;
  tables.gpu = gpu;
  bool have_gemm = false;
  const std::string gemm_name = "gemm/" + gpu + "/data";
  const std::string prefill_dir = "mha/prefill/" + gpu + "/";
  const std::string decode_dir = "mha/decode/" + gpu + "/";
  for (const RawTable& t : raw) {
    if (t.name == gemm_name) {
      auto gemm = build_gemm(t);
      if (!gemm) return gemm.error();
      tables.gemm = std::move(gemm).value();
      have_gemm = true;
    } else if (t.name.rfind(prefill_dir, 0) == 0) {
      auto p = build_prefill(t, t.name.substr(prefill_dir.size()));
      if (!p) return p.error();
      tables.prefill.push_back(std::move(p).value());
    } else if (t.name.rfind(decode_dir, 0) == 0) {
      auto d = build_decode(t, t.name.substr(decode_dir.size()));
      if (!d) return d.error();
      tables.decode.push_back(std::move(d).value());
    }
  }
  if (!have_gemm) return table_error(gemm_name, "missing");
  if (tables.prefill.empty()) return table_error(prefill_dir, "no prefill tables");
  insertion_sort(tables.prefill, [](const PrefillTable& a, const PrefillTable& b) { return a.key < b.key; });
  insertion_sort(tables.decode, [](const DecodeTable& a, const DecodeTable& b) {
    return a.key != b.key ? a.key < b.key : a.tp < b.tp;
  });
  return tables;
}

const PrefillTable* MfuTables::find_prefill(const std::string& key) const {
  for (const PrefillTable& p : prefill)
    if (p.key == key) return &p;
  return nullptr;
}

const uint8_t* embedded_tables_blob() { return embedded::kTablesBlob; }
size_t embedded_tables_blob_size() { return embedded::kTablesBlobSize; }

const MfuTables& embedded_h100_tables() {
  // Decoded once; immutable afterwards. A corrupt blob is a build defect, caught by
  // the table tests; it yields empty tables here rather than a crash.
  static const MfuTables tables = [] {
    auto raw = unpack_tables(embedded::kTablesBlob, embedded::kTablesBlobSize);
    if (!raw) return MfuTables{};
    auto built = MfuTables::build(raw.value(), "h100");
    return built ? std::move(built).value() : MfuTables{};
  }();
  return tables;
}

}  // namespace stepcalc
