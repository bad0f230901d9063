// SPDX-License-Identifier: Apache-2.0
#include "json/json_read.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/index_sort.h"
#include "base/input_limits.h"
#include "json/json_writer.h"

namespace stepcalc::json {

using simdjson::dom::element_type;

void Path::append_to(std::string* out) const {
  if (parent_ != nullptr) parent_->append_to(out);
  if (is_index_) {
    *out += '[';
    *out += std::to_string(index_);
    *out += ']';
    return;
  }
  if (parent_ != nullptr && !out->empty()) *out += '.';  // a root is a prefix as given
  *out += key_;
}

std::string Path::str() const {
  std::string out;
  append_to(&out);
  return out;
}

const char* type_name(element e) {
  switch (e.type()) {
    case element_type::ARRAY:
      return "an array";
    case element_type::OBJECT:
      return "an object";
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE:
      return "a number";
    case element_type::STRING:
      return "a string";
    case element_type::BOOL:
      return "a boolean";
    case element_type::NULL_VALUE:
      return "null";
  }
  return "a value";
}

bool is_number(element e) {
  return e.type() == element_type::INT64 || e.type() == element_type::UINT64 || e.type() == element_type::DOUBLE;
}

Error type_error(const Path& path, element e, const char* wanted) {
  const std::string where = path.str();
  return make_error("type_error", where, where + " must be " + wanted + ", not " + type_name(e) + ".");
}

Error unknown_field(const Path& path, std::string_view key, std::string_view known) {
  const std::string shown = utf8_prefix(key, limits::kMaxEchoBytes);
  const std::string where = path.str();
  return make_error("unknown_field", path.key(shown).str(),
                    "Unknown field '" + shown + "'" + (where.empty() ? "" : " in " + where) +
                        "; known fields: " + std::string(known) + ".");
}

Error missing_field(const Path& path, std::string_view key, const std::string& message) {
  const std::string where = path.key(key).str();
  return make_error("missing_field", where, message.empty() ? where + " is required." : message);
}

Expected<int64_t> read_int(element e, const Path& path, int64_t min, int64_t max, bool truncate) {
  double as_double = 0;
  int64_t value = 0;
  switch (e.type()) {
    case element_type::INT64:
      value = e.get_int64().value_unsafe();
      if (value >= min && value <= max) return value;  // the common case
      as_double = static_cast<double>(value);
      break;
    case element_type::UINT64:
      as_double = static_cast<double>(e.get_uint64().value_unsafe());
      value = INT64_MAX;
      break;
    case element_type::DOUBLE:
      as_double = e.get_double().value_unsafe();
      if (!truncate && as_double != std::trunc(as_double)) {
        const std::string where = path.str();
        return make_error("not_integer", where, where + " must be a whole number.");
      }
      as_double = std::trunc(as_double);
      value = std::fabs(as_double) < 9.2e18 ? static_cast<int64_t>(as_double) : (as_double < 0 ? INT64_MIN : INT64_MAX);
      break;
    default:
      return type_error(path, e, "an integer");
  }
  if (value < min || as_double < static_cast<double>(min)) {
    const std::string where = path.str();
    if (min == 0) return make_error("invalid_value", where, where + " must not be negative.");
    return make_error("invalid_value", where, where + " must be at least " + std::to_string(min) + ".");
  }
  if (value > max || as_double > static_cast<double>(max)) {
    const std::string where = path.str();
    return make_error("out_of_range", where, where + " exceeds the limit of " + std::to_string(max) + ".");
  }
  return value;
}

Expected<double> read_number(element e, const Path& path) {
  double v = 0;
  if (!is_number(e) || e.get_double().get(v) != simdjson::SUCCESS) return type_error(path, e, "a number");
  return v;
}

Expected<double> read_number_in(element e, const Path& path, double min, double max) {
  auto v = read_number(e, path);
  if (!v) return v;
  const double x = v.value();
  // Written so that NaN and infinities fail: every comparison with NaN is false.
  if (!(x >= min)) {
    const std::string where = path.str();
    return make_error("invalid_value", where, where + " must be a finite number >= " + format_double(min) + ".");
  }
  if (!(x <= max)) {
    const std::string where = path.str();
    return make_error("out_of_range", where, where + " exceeds the limit of " + format_double(max) + ".");
  }
  return x;
}

Expected<bool> read_fields(element e, const Path& path, FieldReader read_field) {
  object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return type_error(path, e, "an object");
  for (auto field : o) {
    Expected<bool> read = read_field(field.key, field.value, path.key(field.key));
    if (!read) return read;
  }
  return true;
}

Expected<bool> read_bool(element e, const Path& path) {
  bool on = false;
  if (e.get_bool().get(on) != simdjson::SUCCESS) return type_error(path, e, "true or false");
  return on;
}

Expected<std::string> read_string(element e, const Path& path) {
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS) return type_error(path, e, "a string");
  if (s.size() > limits::kMaxStringBytes) {
    const std::string where = path.str();
    return make_error("out_of_range", where,
                      where + " is longer than " + std::to_string(limits::kMaxStringBytes) + " bytes.");
  }
  return std::string(s);
}

namespace {

/// The alphabetically first key that appears twice in `keys`, or nullptr.
const std::string_view* first_repeat(std::vector<std::string_view>* keys, const std::string_view* few, size_t n) {
  if (keys->empty()) {  // small objects: compare pairs, no allocation
    const std::string_view* repeat = nullptr;
    for (size_t i = 0; i < n; ++i)
      for (size_t j = i + 1; j < n; ++j)
        if (few[i] == few[j] && (repeat == nullptr || few[i] < *repeat)) repeat = &few[i];
    return repeat;
  }
  keys->insert(keys->end(), few, few + n);
  const std::vector<uint32_t> order =
      sorted_indices(keys->size(), keys->data(), [](const void* context, uint32_t a, uint32_t b) {
        const auto* k = static_cast<const std::string_view*>(context);
        return k[a] < k[b];
      });
  for (size_t i = 1; i < order.size(); ++i)  // the smallest key that repeats
    if ((*keys)[order[i]] == (*keys)[order[i - 1]]) return &(*keys)[order[i]];
  return nullptr;
}

}  // namespace

Expected<bool> check_unique_keys(element e, const Path& path) {
  simdjson::dom::array items;
  if (e.get_array().get(items) == simdjson::SUCCESS) {
    size_t i = 0;
    for (element item : items) {
      if (item.is_array() || item.is_object()) {
        auto ok = check_unique_keys(item, path.index(i));
        if (!ok) return ok;
      }
      ++i;
    }
    return true;
  }
  object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return true;
  constexpr size_t kFew = 16;
  std::string_view few[kFew];
  std::vector<std::string_view> many;
  size_t n = 0;
  for (auto field : o) {
    if (field.value.is_array() || field.value.is_object()) {
      auto ok = check_unique_keys(field.value, path.key(field.key));
      if (!ok) return ok;
    }
    if (n < kFew)
      few[n++] = field.key;
    else
      many.push_back(field.key);
  }
  const std::string_view* repeat = first_repeat(&many, few, n);
  if (repeat == nullptr) return true;
  const std::string shown = utf8_prefix(*repeat, limits::kMaxEchoBytes);
  const std::string where = path.str();
  return make_error("parse_error", path.key(shown).str(),
                    "The key '" + shown + "' appears twice in " + (where.empty() ? "the request" : where) +
                        "; each key may appear once.");
}

namespace {

Error parse_failure(simdjson::error_code code) {
  switch (code) {
    case simdjson::DEPTH_ERROR:
      return make_error("too_deep", "",
                        "The JSON nests deeper than " + std::to_string(limits::kMaxJsonDepth) + " levels.");
    case simdjson::CAPACITY:
      return make_error(
          "too_large", "",
          "The JSON document is larger than the limit of " + std::to_string(limits::kMaxDocumentBytes >> 20) + " MiB.");
    case simdjson::UTF8_ERROR:
      return make_error("parse_error", "", "The JSON is not valid UTF-8.");
    case simdjson::NUMBER_ERROR:
    case simdjson::NUMBER_OUT_OF_RANGE:
      return make_error("parse_error", "", "The JSON holds a number that is malformed or out of range.");
    // Our own words for the rest (simdjson's table of every error's text is not linked).
    case simdjson::EMPTY:
      return make_error("parse_error", "", "The document is empty: a JSON object is expected.");
    case simdjson::STRING_ERROR:
    case simdjson::UNCLOSED_STRING:
    case simdjson::UNESCAPED_CHARS:
      return make_error("parse_error", "",
                        "Malformed JSON: a string is unterminated, holds a raw control character or a bad escape.");
    case simdjson::T_ATOM_ERROR:
    case simdjson::F_ATOM_ERROR:
    case simdjson::N_ATOM_ERROR:
      return make_error("parse_error", "",
                        "Malformed JSON: a value is not a number, string, object, array, true, false or null.");
    default:
      return make_error("parse_error", "",
                        "Malformed JSON: commas, colons, quotes or brackets missing or misplaced, or text after "
                        "the document.");
  }
}

}  // namespace

Expected<element> parse_document(simdjson::dom::parser& parser, std::string_view json, size_t max_depth) {
  if (json.size() > limits::kMaxDocumentBytes)
    return make_error("too_large", "",
                      "The JSON document is longer than the limit of " + std::to_string(limits::kMaxDocumentBytes) +
                          " bytes (" + std::to_string(limits::kMaxDocumentBytes >> 20) + " MiB).");
  if (parser.allocate(std::max<size_t>(json.size(), 64), max_depth) != simdjson::SUCCESS)
    return make_error("too_large", "", "Not enough memory to parse the document.");
  element doc;
  const simdjson::error_code code = parser.parse(json.data(), json.size(), true).get(doc);
  if (code != simdjson::SUCCESS) return parse_failure(code);
  return doc;
}

}  // namespace stepcalc::json
