// SPDX-License-Identifier: Apache-2.0
// Kernel pack decoding: header, key tries and predicted latency codes. Mirrors
// tools/kernel-pack-format.mjs operation for operation (the predictions must agree to
// the last bit, so only +, *, /, sqrt and floor on doubles, as there).
#include "kernels/kernel_pack.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace stepcalc {

namespace {

constexpr int kDigitsLow = 100;  // smallest 3-digit mantissa
constexpr int kPerDecade = 900;  // codes per decade
constexpr int kCodeOffset = 8;   // s >= -8
constexpr int kSMax = 12;
constexpr size_t kMaxRows = 4000000;  // far above any table (71k rows today)
constexpr size_t kMaxTables = 64;
constexpr size_t kMaxColumns = 16;
constexpr size_t kMaxText = 256;

// 10^0 .. 10^kSMax: exact doubles, equal to the products 10 * 10 * ... the JavaScript
// encoder forms.
constexpr double kPow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12};
static_assert(sizeof(kPow10) / sizeof(kPow10[0]) == kSMax + 1, "one power per exponent");

double pow10(int n) { return kPow10[n]; }

/// Bounds-checked reading; the first failure sticks and later reads return 0.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool ok() const { return ok_; }
  const std::string& problem() const { return problem_; }
  void fail(const std::string& why) {
    if (ok_) problem_ = why;
    ok_ = false;
  }
  uint8_t byte() {
    if (!ok_ || pos_ >= size_) return fail("truncated"), 0;
    return data_[pos_++];
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 63; shift += 7) {
      uint8_t b = byte();
      if (!ok_) return 0;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    return fail("varint too long"), 0;
  }
  int64_t zigzag() {
    uint64_t v = varint();
    return (v & 1) ? -static_cast<int64_t>(v >> 1) - 1 : static_cast<int64_t>(v >> 1);
  }
  size_t count(size_t limit, const char* what) {
    uint64_t n = varint();
    if (n > limit) return fail(std::string(what) + " count too large"), 0;
    return static_cast<size_t>(n);
  }
  std::string text() {
    size_t n = count(kMaxText, "text");
    if (!ok_ || n > size_ - pos_) return fail("truncated"), std::string();
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    for (char c : s) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) return fail("bad text"), "";
    }
    return s;
  }
  size_t remaining() const { return size_ - pos_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool ok_ = true;
  std::string problem_;
};

// Reads the key trie: for each node, its child list (count, zigzag deltas) or 0 = the
// same list as the previous node at that level.
bool read_trie(ByteReader& in, MeasuredTable& t, size_t rows) {
  const int ncols = static_cast<int>(t.keys.size());
  t.levels.assign(ncols, {});
  std::vector<std::vector<int64_t>> previous(ncols);
  // Breadth of work: level d's entries are created while walking level d-1 in order.
  // Walking depth-first as the encoder did: a stack of (level, node) to expand.
  struct Frame {
    int d;
    uint32_t node;
  };
  std::vector<Frame> stack{{-1, 0}};
  while (!stack.empty() && in.ok()) {
    Frame f = stack.back();
    stack.pop_back();
    const int d = f.d + 1;
    size_t n = in.count(rows, "child");
    if (!in.ok()) return false;
    std::vector<int64_t> list;
    if (n == 0) {
      if (previous[d].empty()) return in.fail("list refers to no previous list"), false;
      list = previous[d];
    } else {
      int64_t v = 0;
      for (size_t i = 0; i < n && in.ok(); ++i) {
        int64_t delta = in.zigzag();
        if (delta <= (i == 0 ? -1 : 0) || delta > (int64_t{1} << 40) || v > (int64_t{1} << 50)) {
          return in.fail("key values not increasing"), false;
        }
        v += delta;
        list.push_back(v);
      }
      previous[d] = list;
    }
    MeasuredTable::Level& level = t.levels[d];
    if (level.value.size() + list.size() > rows) return in.fail("more keys than rows"), false;
    const uint32_t first = static_cast<uint32_t>(level.value.size());
    for (int64_t v : list) {
      level.value.push_back(v);
      level.parent.push_back(f.d < 0 ? 0 : f.node);
    }
    if (f.d >= 0) t.levels[f.d].begin.push_back(first);
    if (d < ncols - 1) {
      // Children are expanded in order: push in reverse so the first pops first.
      for (size_t i = list.size(); i-- > 0;) stack.push_back({d, static_cast<uint32_t>(first + i)});
    }
  }
  if (!in.ok()) return false;
  for (int d = 0; d + 1 < ncols; ++d) t.levels[d].begin.push_back(static_cast<uint32_t>(t.levels[d + 1].value.size()));
  for (int d = 0; d + 1 < ncols; ++d) {
    if (t.levels[d].begin.size() != t.levels[d].value.size() + 1) return in.fail("inconsistent key trie"), false;
  }
  if (t.levels[ncols - 1].value.size() != rows) return in.fail("key trie does not match the row count"), false;
  return true;
}

// The prediction of tools/kernel-pack-format.mjs predictCode, step for step.
int64_t predict_code(const MeasuredTable& t, const std::vector<int64_t>& codes, uint32_t j, int64_t last_code) {
  const int L = t.last_level();
  const MeasuredTable::Level& leaf = t.levels[L];
  const std::vector<double>& values = t.latency_us;
  const uint32_t p = leaf.parent[j];
  const int64_t x = leaf.value[j];
  const bool has_prev = L >= 1 ? j > t.children(L - 1, p).first : j > 0;
  const int64_t b = has_prev ? static_cast<int64_t>(j) - 1 : -1;
  const int64_t x_prev = has_prev ? leaf.value[j - 1] : 0;
  int64_t a = -1, c = -1, a2 = -1, c2 = -1;
  if (L >= 1 && p > t.children(L - 2, t.levels[L - 1].parent[p]).first) {
    a = t.find_child(L - 1, p - 1, x);
    if (has_prev) c = t.find_child(L - 1, p - 1, x_prev);
  }
  if (L >= 2) {
    const uint32_t g = t.levels[L - 1].parent[p];
    if (g > t.children(L - 3, t.levels[L - 2].parent[g]).first) {
      const int64_t h = t.find_child(L - 2, g - 1, t.levels[L - 1].value[p]);
      if (h >= 0) {
        a2 = t.find_child(L - 1, static_cast<uint32_t>(h), x);
        if (has_prev) c2 = t.find_child(L - 1, static_cast<uint32_t>(h), x_prev);
      }
    }
  }
  const double p1 = a >= 0 && b >= 0 && c >= 0 ? (values[a] * values[b]) / values[c] : 0;
  const double p2 = a2 >= 0 && b >= 0 && c2 >= 0 ? (values[a2] * values[b]) / values[c2] : 0;
  if (p1 > 0 && p2 > 0) return code_of_latency(std::sqrt(p1 * p2));
  if (p1 > 0) return code_of_latency(p1);
  if (p2 > 0) return code_of_latency(p2);
  if (b >= 0) return codes[b];
  if (a >= 0) return codes[a];
  if (a2 >= 0) return codes[a2];
  return last_code;
}

bool read_table(ByteReader& in, MeasuredTable& t) {
  const uint8_t kind = in.byte();
  const uint8_t dtype = in.byte();
  if (kind > static_cast<uint8_t>(KernelTable::kKdaPrefill) || dtype >= kKernelDtypeCount)
    return in.fail("unknown table kind"), false;
  t.kind = static_cast<KernelTable>(kind);
  t.dtype = static_cast<KernelDtype>(dtype);
  t.csv = in.text();
  const uint64_t first_row = in.varint();
  const size_t ncols = in.count(kMaxColumns, "column");
  if (!in.ok() || ncols == 0 || first_row > kMaxRows) return in.fail("bad table header"), false;
  t.first_row = static_cast<uint32_t>(first_row);
  for (size_t i = 0; i < ncols; ++i) t.keys.push_back(in.text());
  const size_t rows = in.count(kMaxRows, "row");
  // Every row costs at least one byte of residual: a count beyond the bytes left is a lie.
  if (!in.ok() || rows == 0 || rows > in.remaining()) return in.fail("bad row count"), false;
  if (!read_trie(in, t, rows)) return false;
  std::vector<int64_t> codes(rows);
  t.latency_us.resize(rows);
  int64_t last = 0;
  for (uint32_t j = 0; j < rows && in.ok(); ++j) {
    const int64_t code = predict_code(t, codes, j, last) + in.zigzag();
    if (code < 0 || code >= (kSMax + kCodeOffset + 1) * kPerDecade) return in.fail("latency out of range"), false;
    codes[j] = code;
    t.latency_us[j] = latency_of_code(code);
    last = code;
  }
  if (in.ok()) {
    // The lower monotone envelope along the last level, every table's work axis (GEMM m, MoE
    // tokens, attention cached tokens or sequence, all-reduce elements, DeltaNet batch or
    // sequence): a cell above a later cell of its row is an outlier (time never falls as the
    // work grows).
    t.envelope_us = t.latency_us;
    std::vector<double>& env = t.envelope_us;
    const int L = t.last_level();
    const std::vector<int64_t>& xs = t.levels[L].value;
    const auto suffix_min = [&](uint32_t lo, uint32_t hi) {
      for (uint32_t j = hi; j-- > lo + 1;) env[j - 1] = std::min(env[j - 1], env[j]);
    };
    for (size_t node = 0; L >= 1 && node + 1 < t.levels[L - 1].begin.size(); ++node) {
      auto [lo, hi] = t.children(L - 1, static_cast<uint32_t>(node));
      suffix_min(lo, hi);
    }
    // Where the level before the work axis is work too (batch: attention, MLA, DSA, DeltaNet/KDA
    // prefill; GEMM's k), a cell never exceeds the next larger value's time at the same work:
    // that row read between its measured points (outside them, no bound), rows walked from the
    // largest value down.
    if (L >= 1 && t.keys.size() == static_cast<size_t>(L) + 1 && (t.keys[L - 1] == "batch" || t.keys[L - 1] == "k")) {
      const MeasuredTable::Level& batch = t.levels[L - 1];
      for (uint32_t b = static_cast<uint32_t>(batch.value.size()) - 1; b-- > 0;) {
        if (L >= 2 && batch.parent[b] != batch.parent[b + 1]) continue;  // the next is another shape's
        auto [lo, hi] = t.children(L - 1, b);
        auto [nlo, nhi] = t.children(L - 1, b + 1);
        uint32_t k = nlo;
        for (uint32_t j = lo; j < hi; ++j) {
          while (k < nhi && xs[k] < xs[j]) ++k;
          if (k == nhi) break;
          if (xs[k] != xs[j] && k == nlo) continue;
          const double next = xs[k] == xs[j]
                                  ? env[k]
                                  : env[k - 1] + (env[k] - env[k - 1]) * static_cast<double>(xs[j] - xs[k - 1]) /
                                                     static_cast<double>(xs[k] - xs[k - 1]);
          env[j] = std::min(env[j], next);
        }
        suffix_min(lo, hi);
      }
    }
  }
  return in.ok();
}

}  // namespace

double latency_of_code(int64_t code) {
  const int s = static_cast<int>(code / kPerDecade) - kCodeOffset;
  const double mant = static_cast<double>(code % kPerDecade + kDigitsLow);
  return s >= 0 ? mant * pow10(s) : mant / pow10(-s);
}

int64_t code_of_latency(double p) {
  int s = kSMax;
  while (s > -kCodeOffset && p < (s >= 0 ? kDigitsLow * pow10(s) : kDigitsLow / pow10(-s))) --s;
  const double scaled = s >= 0 ? p / pow10(s) : p * pow10(-s);
  double mant = std::floor(scaled + 0.5);
  if (!(mant >= kDigitsLow)) mant = kDigitsLow;  // also NaN
  if (mant > 10 * kDigitsLow - 1) mant = 10 * kDigitsLow - 1;
  return static_cast<int64_t>(s + kCodeOffset) * kPerDecade + static_cast<int64_t>(mant) - kDigitsLow;
}

namespace {}  // namespace

uint32_t pack_crc32(const uint8_t* data, size_t size) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < size; ++i) c = table[(c ^ data[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

namespace {

Expected<DecodedPack> decode(const uint8_t* data, size_t size, bool header_only) {
  DecodedPack pack;
  auto corrupt = [&](const std::string& why) {
    const std::string who = pack.gpu.empty() ? "A kernel pack"
                                             : "The kernel pack for " + pack.gpu + " " + pack.version +
                                                   (pack.part.empty() ? "" : " (" + pack.part + ")");
    return make_error("corrupt_kernels", "", who + " is corrupt: " + why + ".");
  };
  if (data == nullptr || size < 8 || std::memcmp(data, "SCK2", 4) != 0) return corrupt("not a stepcalc kernel pack");
  // The last 4 bytes are the CRC-32 of the rest (written at pack time): any damage is
  // refused here rather than decoded into different prices. The names are read first
  // so the message can say whose pack it is.
  size -= 4;
  const uint32_t stored = static_cast<uint32_t>(data[size]) | static_cast<uint32_t>(data[size + 1]) << 8 |
                          static_cast<uint32_t>(data[size + 2]) << 16 | static_cast<uint32_t>(data[size + 3]) << 24;
  ByteReader in(data + 4, size - 4);
  pack.gpu = in.text();
  pack.version = in.text();
  pack.part = in.text();
  if (!in.ok()) pack.gpu.clear(), pack.version.clear(), pack.part.clear();
  if (pack_crc32(data, size) != stored) return corrupt("its checksum does not match (the file was damaged)");
  if (!in.ok()) return corrupt(in.problem());
  if (header_only) return pack;
  const size_t ntables = in.count(kMaxTables, "table");
  if (!in.ok() || ntables == 0) return corrupt(in.ok() ? "no tables" : in.problem());
  for (size_t i = 0; i < ntables; ++i) {
    auto t = std::make_shared<MeasuredTable>();
    if (!read_table(in, *t)) return corrupt(in.problem());
    pack.tables.push_back(std::move(t));
  }
  if (in.remaining() != 0) return corrupt("trailing bytes");
  return pack;
}

}  // namespace

Expected<DecodedPack> decode_pack(const uint8_t* data, size_t size) { return decode(data, size, false); }

Expected<DecodedPack> decode_pack_header(const uint8_t* data, size_t size) { return decode(data, size, true); }

}  // namespace stepcalc
