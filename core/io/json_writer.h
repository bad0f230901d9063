// SPDX-License-Identifier: Apache-2.0
// A minimal streaming JSON writer: exact numbers, escaped strings, no allocation
// beyond the output string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stepcalc {

/// Decimal text that round-trips: reads back as exactly `v` (Grisu2, at most 17
/// significant digits; not always the shortest such text).
/// Non-finite values are written as null (JSON has no NaN/Infinity).
std::string format_double(double v);

/// `v` with exactly `decimals` digits after the point, rounded half away from zero
/// (no locale, no printf), for messages: format_fixed(79.2249, 2) is "79.22".
std::string format_fixed(double v, int decimals);

/// At most `max_bytes` of `text`, cut at a UTF-8 character boundary (for echoing
/// user text in messages without splitting a multi-byte character).
std::string utf8_prefix(std::string_view text, size_t max_bytes);

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  JsonWriter& value(double v);
  JsonWriter& value(int64_t v);
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(bool v);
  JsonWriter& value(std::string_view v);
  JsonWriter& value(const char* v) { return value(std::string_view(v)); }
  JsonWriter& null();
  /// Inserts already-serialised JSON as one value.
  JsonWriter& raw(std::string_view json);
  template <typename T>
  JsonWriter& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }
  const std::string& str() const { return out_; }
  /// True once a NaN or infinity was written (as null): results must refuse then.
  bool wrote_non_finite() const { return non_finite_; }
  std::string take() { return std::move(out_); }

 private:
  void separate();
  std::string out_;
  bool need_comma_ = false;
  bool non_finite_ = false;
};

/// `text` as a JSON string literal with quotes. Bytes that are not valid UTF-8
/// become U+FFFD, so the output is always valid JSON text; control characters (C0,
/// DEL, C1) and the Unicode controls that reorder or break lines (bidi marks and
/// overrides, U+2028/U+2029, U+FEFF) are written as \u escapes, so a printed result
/// cannot act on a terminal.
std::string json_quote(std::string_view text);

}  // namespace stepcalc
