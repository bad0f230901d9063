// SPDX-License-Identifier: Apache-2.0
// Reading JSON input with simdjson's DOM (no exceptions): typed, range-checked field
// reads whose errors name the JSON path. The path is built only when an error is
// reported, so a valid document is read without building any path string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "base/error.h"
#include "simdjson.h"

namespace stepcalc::json {

using simdjson::dom::element;
using simdjson::dom::object;

/// A JSON path as a chain of stack frames (`model.text_config.hidden_size`,
/// `step.decode_requests[3]`). Cheap to extend; `str()` builds the text. A child
/// refers to its parent and to the key's bytes: use it only while both live.
class Path {
 public:
  /// The root: "" for a whole document, or a prefix such as "model" or "[3]".
  explicit Path(std::string_view root = "") : key_(root) {}
  Path key(std::string_view key) const { return Path(this, key, 0, false); }
  Path index(size_t i) const { return Path(this, {}, i, true); }
  std::string str() const;

 private:
  Path(const Path* parent, std::string_view key, size_t index, bool is_index)
      : parent_(parent), key_(key), index_(index), is_index_(is_index) {}
  void append_to(std::string* out) const;
  const Path* parent_ = nullptr;
  std::string_view key_;
  size_t index_ = 0;
  bool is_index_ = false;
};

/// "an array", "a number", ... for messages.
const char* type_name(element e);

bool is_number(element e);

/// type_error: "PATH must be WANTED, not an array."
Error type_error(const Path& path, element e, const char* wanted);

/// unknown_field at PATH.KEY, listing the `known` fields.
Error unknown_field(const Path& path, std::string_view key, std::string_view known);

/// missing_field at PATH.KEY with `message` (or "PATH.KEY is required." when empty).
Error missing_field(const Path& path, std::string_view key, const std::string& message = "");

/// An integer in [min, max]. `truncate`: fractions are cut toward zero (model
/// configs, as the reference reads them); otherwise a fraction is `not_integer`.
/// Values too large for int64 are out_of_range, never cast.
Expected<int64_t> read_int(element e, const Path& path, int64_t min, int64_t max, bool truncate);

/// Any JSON number as a double.
Expected<double> read_number(element e, const Path& path);

/// A number in [min, max]: invalid_value below min, out_of_range above max. NaN and
/// infinities fail too, so a value far beyond the limit (1e300, or one the reader
/// rounded to infinity) is refused like one just above it.
Expected<double> read_number_in(element e, const Path& path, double min, double max);

/// true or false (type_error "PATH must be true or false" otherwise).
Expected<bool> read_bool(element e, const Path& path);

/// A string of at most limits::kMaxStringBytes bytes.
Expected<std::string> read_string(element e, const Path& path);

/// Reads one field of an object: (key, value, where) -> true, or the Error that stops
/// the reading. A reference to a callable (a lambda), valid while the callable lives,
/// so every object reader shares one compiled field loop.
class FieldReader {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FieldReader>>>
  FieldReader(F&& read) : read_(&read), call_(&call<std::remove_reference_t<F>>) {}
  Expected<bool> operator()(std::string_view key, element value, const Path& where) const {
    return call_(read_, key, value, where);
  }

 private:
  template <typename F>
  static Expected<bool> call(void* read, std::string_view key, element value, const Path& where) {
    return (*static_cast<F*>(read))(key, value, where);
  }
  void* read_;
  Expected<bool> (*call_)(void*, std::string_view, element, const Path&);
};

/// Reads the object `e` field by field, in document order: `read_field(key, value,
/// where)` reads one field (`where` is its path) and returns an Error for a value it
/// refuses or a key it does not know; the first error stops the reading. type_error
/// when `e` is not an object. Every object reader of the request is this one loop,
/// but for the step's items (the hot loop, written out in step_json.cpp).
Expected<bool> read_fields(element e, const Path& path, FieldReader read_field);

/// Stores `read` (a field just read) in `*out`, or passes its error on: a field of a
/// read_fields callback in one statement.
template <typename T, typename Out>
Expected<bool> store(Expected<T> read, Out* out) {
  if (!read) return read.error();
  *out = std::move(read).value();
  return true;
}

/// The first repeated key in any object inside `e` (depth first; within one object
/// the alphabetically first repeat), as a parse_error naming its path. JSON parsers
/// disagree on which copy wins (simdjson takes the first, JSON.parse the last), so
/// a repeated key would price differently in the CLI and the page: it is refused.
Expected<bool> check_unique_keys(element e, const Path& path);

/// Parses `json` with a parser owned by the caller (the DOM lives as long as the
/// parser); too_large, too_deep and parse_error at the document level.
Expected<element> parse_document(simdjson::dom::parser& parser, std::string_view json, size_t max_depth);

}  // namespace stepcalc::json
