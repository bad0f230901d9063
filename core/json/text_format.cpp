// SPDX-License-Identifier: Apache-2.0
#include "json/text_format.h"

#include <cmath>
#include <cstdint>

#include "simdjson.h"

namespace stepcalc {

void append_integer(std::string& out, int64_t v) {
  char buf[24];
  char* end = buf + sizeof buf;
  char* p = end;
  uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  do {
    *--p = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude != 0);
  if (v < 0) *--p = '-';
  out.append(p, static_cast<size_t>(end - p));
}

void append_double(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
  } else if (v == 0) {
    out += '0';
  } else if (std::fabs(v) < 9007199254740992.0 && v == std::trunc(v)) {
    append_integer(out, static_cast<int64_t>(v));
  } else {
    // simdjson's Grisu2 to_chars (declared in simdjson.h): digits that round-trip (read
    // back as exactly v; Grisu2 is not always the shortest such text), without pulling
    // printf's long-double code into the Wasm.
    char buf[40];
    char* end = simdjson::internal::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, static_cast<size_t>(end - buf));
  }
}

std::string format_double(double v) {
  std::string out;
  append_double(out, v);
  return out;
}

std::string format_fixed(double v, int decimals) {
  if (!std::isfinite(v) || std::fabs(v) >= 1e15) return format_double(v);
  int64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  const int64_t scaled = static_cast<int64_t>(std::llround(std::fabs(v) * static_cast<double>(scale)));
  std::string out = v < 0 && scaled != 0 ? "-" : "";
  append_integer(out, scaled / scale);
  if (decimals > 0) {
    std::string frac;
    append_integer(frac, scaled % scale);
    out += "." + std::string(static_cast<size_t>(decimals) - frac.size(), '0') + frac;
  }
  return out;
}

size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t j) { return static_cast<unsigned char>(text[j]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c == 0xE0)
    n = 3, lo = 0xA0;
  else if (c == 0xED)
    n = 3, hi = 0x9F;
  else if (c >= 0xE1 && c <= 0xEF)
    n = 3;
  else if (c == 0xF0)
    n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3)
    n = 4;
  else if (c == 0xF4)
    n = 4, hi = 0x8F;
  else
    return 0;
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t j = 2; j < n; ++j)
    if (byte(i + j) < 0x80 || byte(i + j) > 0xBF) return 0;
  return n;
}

std::string utf8_prefix(std::string_view text, size_t max_bytes) {
  size_t end = 0;
  while (end < text.size()) {
    const size_t n = utf8_sequence_length(text, end);
    const size_t step = n == 0 ? 1 : n;
    if (end + step > max_bytes) break;
    end += step;
  }
  return std::string(text.substr(0, end));
}

}  // namespace stepcalc
