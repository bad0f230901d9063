// SPDX-License-Identifier: Apache-2.0
// A minimal streaming JSON writer: exact numbers, escaped strings, no allocation
// beyond the output string.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "json/text_format.h"

namespace stepcalc {

/// One name and scalar value of a JSON object, for writing a list of fields in one
/// call (JsonWriter::fields, JsonWriter::object). The constructors are the overloads
/// of JsonWriter::value, so a value is written as `field(name, value)` would write it.
/// Holds views: use it within the expression that writes it.
struct JsonField {
  JsonField(const char* n, double v) : name(n), kind(kNumber), number(v) {}
  JsonField(const char* n, int64_t v) : name(n), kind(kInteger), integer(v) {}
  JsonField(const char* n, int v) : JsonField(n, static_cast<int64_t>(v)) {}
  JsonField(const char* n, bool v) : name(n), kind(kBool), flag(v) {}
  JsonField(const char* n, std::string_view v) : name(n), kind(kText), text(v) {}
  JsonField(const char* n, const char* v) : JsonField(n, std::string_view(v)) {}

  const char* name;  // a literal: field names are known when the code is written
  enum Kind : uint8_t { kNumber, kInteger, kBool, kText } kind;
  union {
    double number;
    int64_t integer;
    bool flag;
    std::string_view text;
  };
};

class JsonWriter {
 public:
  JsonWriter() = default;
  // Not copied or moved: data_ points into out_.
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;
  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }
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
  /// Writes each of `fields` into the open object, in order.
  JsonWriter& fields(std::initializer_list<JsonField> fields);
  /// Writes the value {fields...} (an array element).
  JsonWriter& object(std::initializer_list<JsonField> fields);
  /// Writes `name`: {fields...} into the open object.
  JsonWriter& object(std::string_view name, std::initializer_list<JsonField> fields);
  /// The text written so far (a copy).
  std::string str() const { return std::string(data_ == nullptr ? "" : data_, size_); }
  /// Bytes written so far.
  size_t size() const { return size_; }
  /// True once a NaN or infinity was written (as null): results must refuse then.
  bool wrote_non_finite() const { return non_finite_; }
  /// The text written; the writer is empty afterwards.
  std::string take();

 private:
  // The text is written through a pointer into out_, which is kept larger than the text
  // (size_ bytes used): a result has thousands of keys and values, and appending each
  // character through std::string's members costs a call per character where the module
  // is built for size (emcc's -Oz does not inline them; BENCHMARKS.md). The few helpers
  // every character goes through are forced inline for the same reason.
#define STEPCALC_JSON_INLINE __attribute__((always_inline)) inline
  STEPCALC_JSON_INLINE char* room(size_t n) {
    if (capacity_ - size_ < n) grow(n);
    return data_ + size_;
  }
  STEPCALC_JSON_INLINE void put(char c) {
    *room(1) = c;
    ++size_;
  }
  void put(const char* text, size_t n);
  void put(std::string_view text) { put(text.data(), text.size()); }
  void grow(size_t n);
  void put_quoted(std::string_view text);
  void put_u_escape(uint32_t cp);
  STEPCALC_JSON_INLINE void separate() {
    if (need_comma_) put(',');
    need_comma_ = true;
  }
  /// Starts an object or array ('{' or '['), or ends one ('}' or ']').
  STEPCALC_JSON_INLINE JsonWriter& open(char bracket) {
    separate();
    put(bracket);
    need_comma_ = false;
    return *this;
  }
  STEPCALC_JSON_INLINE JsonWriter& close(char bracket) {
    put(bracket);
    need_comma_ = true;
    return *this;
  }
#undef STEPCALC_JSON_INLINE
  std::string out_;  // storage: capacity_ bytes, of which size_ written
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
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
