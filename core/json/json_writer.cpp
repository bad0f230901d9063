// SPDX-License-Identifier: Apache-2.0
#include "json/json_writer.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "json/text_format.h"

namespace stepcalc {

void JsonWriter::grow(size_t n) {
  size_t capacity = capacity_ < 256 ? 256 : capacity_ * 2;
  if (capacity - size_ < n) capacity = size_ + n;
  out_.resize(capacity);
  data_ = &out_[0];
  capacity_ = capacity;
}
void JsonWriter::put(const char* text, size_t n) {
  if (n != 0) std::memcpy(room(n), text, n);
  size_ += n;
}
std::string JsonWriter::take() {
  out_.resize(size_);
  data_ = nullptr;
  size_ = capacity_ = 0;
  need_comma_ = false;
  return std::move(out_);
}

JsonWriter& JsonWriter::key(std::string_view name) {
  separate();
  put_quoted(name);
  put(':');
  need_comma_ = false;
  return *this;
}
JsonWriter& JsonWriter::value(double v) {
  separate();
  if (!std::isfinite(v)) non_finite_ = true;
  size_ = static_cast<size_t>(write_double(room(kMaxNumberChars), v) - data_);
  return *this;
}
JsonWriter& JsonWriter::value(int64_t v) {
  separate();
  size_ = static_cast<size_t>(write_integer(room(kMaxNumberChars), v) - data_);
  return *this;
}
JsonWriter& JsonWriter::value(bool v) {
  separate();
  put(v ? std::string_view("true") : std::string_view("false"));
  return *this;
}
JsonWriter& JsonWriter::value(std::string_view v) {
  separate();
  put_quoted(v);
  return *this;
}
JsonWriter& JsonWriter::null() {
  separate();
  put(std::string_view("null"));
  return *this;
}
JsonWriter& JsonWriter::raw(std::string_view json) {
  separate();
  put(json);
  return *this;
}
JsonWriter& JsonWriter::fields(std::initializer_list<JsonField> fields) {
  for (const JsonField& f : fields) {
    key(f.name);
    if (f.kind == JsonField::kNumber) value(f.number);
    if (f.kind == JsonField::kInteger) value(f.integer);
    if (f.kind == JsonField::kBool) value(f.flag);
    if (f.kind == JsonField::kText) value(f.text);
  }
  return *this;
}
JsonWriter& JsonWriter::object(std::initializer_list<JsonField> fields) {
  return begin_object().fields(fields).end_object();
}
JsonWriter& JsonWriter::object(std::string_view name, std::initializer_list<JsonField> fields) {
  return key(name).object(fields);
}

namespace {

/// The code point of the valid `n`-byte UTF-8 sequence at text[i].
uint32_t code_point(std::string_view text, size_t i, size_t n) {
  static const unsigned char kLeadMask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  uint32_t cp = static_cast<unsigned char>(text[i]) & kLeadMask[n];
  for (size_t j = 1; j < n; ++j) cp = (cp << 6) | (static_cast<unsigned char>(text[i + j]) & 0x3F);
  return cp;
}

/// Controls that are valid JSON as they are but act on a terminal or reorder text
/// (C1, bidi marks, embeddings, overrides and isolates, line and paragraph separators,
/// the byte-order mark): written as \u escapes so printed results cannot fake lines.
bool is_invisible_control(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
}

}  // namespace

void JsonWriter::put_u_escape(uint32_t cp) {
  static const char kHex[] = "0123456789abcdef";
  char* p = room(6);
  *p++ = '\\';
  *p++ = 'u';
  for (int shift = 12; shift >= 0; shift -= 4) *p++ = kHex[(cp >> shift) & 0xf];
  size_ += 6;
}

void JsonWriter::put_quoted(std::string_view text) {
  put('"');
  size_t plain = 0;  // the common case: nothing to escape, one copy
  while (plain < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[plain]);
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f) break;
    ++plain;
  }
  put(text.data(), plain);
  for (size_t i = plain; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t n = utf8_sequence_length(text, i);
      if (n == 0) {
        put(std::string_view("\\ufffd"));
        ++i;
      } else if (is_invisible_control(code_point(text, i, n))) {
        put_u_escape(code_point(text, i, n));
        i += n;
      } else {
        put(text.data() + i, n);
        i += n;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        put(std::string_view("\\\""));
        break;
      case '\\':
        put(std::string_view("\\\\"));
        break;
      case '\n':
        put(std::string_view("\\n"));
        break;
      case '\r':
        put(std::string_view("\\r"));
        break;
      case '\t':
        put(std::string_view("\\t"));
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          put_u_escape(c);
        } else {
          put(static_cast<char>(c));
        }
    }
  }
  put('"');
}

std::string json_quote(std::string_view text) { return JsonWriter().value(text).take(); }

}  // namespace stepcalc
