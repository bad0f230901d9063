// SPDX-License-Identifier: Apache-2.0
#include "json/text_format.h"

#include <cmath>
#include <cstdint>

#include "simdjson.h"

namespace stepcalc {

char* write_integer(char* buf, int64_t v) {
  char digits[24];
  char* end = digits + sizeof digits;
  char* p = end;
  uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  do {
    *--p = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude != 0);
  if (v < 0) *--p = '-';
  while (p != end) *buf++ = *p++;
  return buf;
}

char* write_double(char* buf, double v) {
  if (!std::isfinite(v)) {
    static const char kNull[] = "null";
    for (const char* c = kNull; *c != '\0'; ++c) *buf++ = *c;
    return buf;
  }
  if (v == 0) {
    *buf = '0';
    return buf + 1;
  }
  if (std::fabs(v) < 9007199254740992.0 && v == std::trunc(v)) return write_integer(buf, static_cast<int64_t>(v));
  // simdjson's Grisu2 to_chars (declared in simdjson.h): digits that round-trip (read
  // back as exactly v; Grisu2 is not always the shortest such text), without pulling
  // printf's long-double code into the Wasm.
  return simdjson::internal::to_chars(buf, buf + kMaxNumberChars, v);
}

void append_integer(std::string& out, int64_t v) {
  char buf[kMaxNumberChars];
  out.append(buf, static_cast<size_t>(write_integer(buf, v) - buf));
}

void append_double(std::string& out, double v) {
  char buf[kMaxNumberChars];
  out.append(buf, static_cast<size_t>(write_double(buf, v) - buf));
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

namespace {

/// 10^n for 0 <= n <= 22 (exact as a double).
double exact_power_of_ten(int n) {
  double p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

/// round(a * 10^-e) for a > 0, dividing or multiplying by an exact power of ten.
int64_t scaled_digits(double a, int e) {
  if (e >= 0) {
    double q = a;
    for (; e > 22; e -= 22) q /= exact_power_of_ten(22);
    return std::llround(q / exact_power_of_ten(e));
  }
  double q = a;
  for (e = -e; e > 22; e -= 22) q *= exact_power_of_ten(22);
  return std::llround(q * exact_power_of_ten(e));
}

}  // namespace

std::string format_significant(double v, int digits) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  digits = digits < 1 ? 1 : digits > 15 ? 15 : digits;
  const double a = std::fabs(v);
  const int64_t top = static_cast<int64_t>(exact_power_of_ten(digits));
  // The decimal exponent x of the rounded value: a ~ d.ddd x 10^x with `digits` digits d.
  int x = static_cast<int>(std::floor(std::log10(a)));
  int64_t d = scaled_digits(a, x - digits + 1);
  if (d >= top) d = scaled_digits(a, ++x - digits + 1);      // rounded up to the next decade
  if (d < top / 10) d = scaled_digits(a, --x - digits + 1);  // log10 rounded up
  std::string text;
  append_integer(text, d);  // `digits` digits
  std::string out = v < 0 ? "-" : "";
  if (x < -4 || x >= digits) {
    while (text.size() > 1 && text.back() == '0') text.pop_back();
    out += text[0];
    if (text.size() > 1) out += "." + text.substr(1);
    out += x < 0 ? "e-" : "e+";
    const int ax = x < 0 ? -x : x;
    if (ax < 10) out += '0';
    append_integer(out, ax);
    return out;
  }
  // Fixed: the point after digit x + 1 (x may be negative: leading zeros).
  std::string whole, fraction;
  if (x >= 0) {
    whole = text.substr(0, static_cast<size_t>(x) + 1);
    fraction = text.substr(static_cast<size_t>(x) + 1);
  } else {
    whole = "0";
    fraction = std::string(static_cast<size_t>(-x - 1), '0') + text;
  }
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  out += whole;
  if (!fraction.empty()) out += "." + fraction;
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
