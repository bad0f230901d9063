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
  const std::string& str() const { return out_; }
  /// True once a NaN or infinity was written (as null): results must refuse then.
  bool wrote_non_finite() const { return non_finite_; }
  std::string take() { return std::move(out_); }

 private:
  void separate();
  /// Starts an object or array ('{' or '['), or ends one ('}' or ']').
  JsonWriter& open(char bracket);
  JsonWriter& close(char bracket);
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
