// SPDX-License-Identifier: Apache-2.0
// Errors as values: every fallible core function returns Expected<T>, never throws.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace stepcalc {

/// A refusal to price, naming the offending input.
/// `code` is a stable machine-readable word (see docs/INPUT.md), `path` the JSON
/// path of the field at fault (e.g. `step.decode_requests[3].progress_index`; empty
/// for the document as a whole), `message` one plain sentence for people.
/// A plain-language note about an approximation; `code` is a stable word.
struct Warning {
  std::string code;
  std::string message;
};

struct Error {
  std::string code;
  std::string path;
  std::string message;
};

/// Either a value or an Error (a small std::expected for C++17).
template <typename T>
class Expected {
 public:
  Expected(T value) : data_(std::move(value)) {}
  Expected(Error error) : data_(std::move(error)) {}

  bool ok() const { return data_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<0>(data_); }
  T& value() & { return std::get<0>(data_); }
  T&& value() && { return std::get<0>(std::move(data_)); }
  const T* operator->() const { return &std::get<0>(data_); }
  const T& operator*() const { return std::get<0>(data_); }
  const Error& error() const { return std::get<1>(data_); }

 private:
  std::variant<T, Error> data_;
};

inline Error make_error(std::string code, std::string path, std::string message) {
  return Error{std::move(code), std::move(path), std::move(message)};
}

}  // namespace stepcalc
