// SPDX-License-Identifier: Apache-2.0
#include "json/json_writer.h"

#include <cmath>
#include <cstdint>

#include "json/text_format.h"

namespace stepcalc {
namespace {

// The writer appends numbers and strings straight to its output (no temporary string
// per key or value: the result JSON has hundreds of them).
void append_quoted(std::string& out, std::string_view text);

}  // namespace

void JsonWriter::separate() {
  if (need_comma_) out_ += ',';
  need_comma_ = true;
}

JsonWriter& JsonWriter::open(char bracket) {
  separate();
  out_ += bracket;
  need_comma_ = false;
  return *this;
}
JsonWriter& JsonWriter::close(char bracket) {
  out_ += bracket;
  need_comma_ = true;
  return *this;
}
JsonWriter& JsonWriter::key(std::string_view name) {
  separate();
  append_quoted(out_, name);
  out_ += ':';
  need_comma_ = false;
  return *this;
}
JsonWriter& JsonWriter::value(double v) {
  separate();
  if (!std::isfinite(v)) non_finite_ = true;
  append_double(out_, v);
  return *this;
}
JsonWriter& JsonWriter::value(int64_t v) {
  separate();
  append_integer(out_, v);
  return *this;
}
JsonWriter& JsonWriter::value(bool v) {
  separate();
  out_ += v ? "true" : "false";
  return *this;
}
JsonWriter& JsonWriter::value(std::string_view v) {
  separate();
  append_quoted(out_, v);
  return *this;
}
JsonWriter& JsonWriter::null() {
  separate();
  out_ += "null";
  return *this;
}
JsonWriter& JsonWriter::raw(std::string_view json) {
  separate();
  out_ += json;
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

void append_u_escape(std::string& out, uint32_t cp) {
  static const char kHex[] = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xf];
}

void append_quoted(std::string& out, std::string_view text) {
  out += '"';
  size_t plain = 0;  // the common case: nothing to escape, one append
  while (plain < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[plain]);
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f) break;
    ++plain;
  }
  out.append(text.data(), plain);
  for (size_t i = plain; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t n = utf8_sequence_length(text, i);
      if (n == 0) {
        out += "\\ufffd";
        ++i;
      } else if (is_invisible_control(code_point(text, i, n))) {
        append_u_escape(out, code_point(text, i, n));
        i += n;
      } else {
        out.append(text.substr(i, n));
        i += n;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          append_u_escape(out, c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

}  // namespace

std::string json_quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  append_quoted(out, text);
  return out;
}

}  // namespace stepcalc
