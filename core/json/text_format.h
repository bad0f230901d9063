// SPDX-License-Identifier: Apache-2.0
// Numbers and user text as text, without printf or locales: the JSON writer's number
// formatting and the helpers messages use (exact decimals, fixed decimals, UTF-8-safe
// prefixes). Bottom layer: any folder may use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace stepcalc {

/// Room for any number write_integer or write_double writes.
constexpr size_t kMaxNumberChars = 40;

/// Writes `v` in decimal at `buf` (kMaxNumberChars bytes); returns the end.
char* write_integer(char* buf, int64_t v);

/// Writes `v` as format_double writes it at `buf` (kMaxNumberChars bytes); returns the end.
char* write_double(char* buf, double v);

/// Appends `v` in decimal.
void append_integer(std::string& out, int64_t v);

/// Appends `v` as format_double writes it.
void append_double(std::string& out, double v);

/// Decimal text that round-trips: reads back as exactly `v` (Grisu2, at most 17
/// significant digits; not always the shortest such text).
/// Non-finite values are written as null (JSON has no NaN/Infinity).
std::string format_double(double v);

/// `v` with exactly `decimals` digits after the point, rounded half away from zero
/// (no locale, no printf), for messages: format_fixed(79.2249, 2) is "79.22".
std::string format_fixed(double v, int decimals);

/// `v` with `digits` (1-15) significant digits, as printf's "%.<digits>g" writes it for
/// messages (trailing zeros dropped; an exponent below -4 or from `digits` on written as
/// e-05 / e+07): format_significant(0.0123456, 3) is "0.0123". Decimal rounding of the
/// double, so a value within an ulp of a tie may round the other way than printf.
std::string format_significant(double v, int digits);

/// At most `max_bytes` of `text`, cut at a UTF-8 character boundary (for echoing
/// user text in messages without splitting a multi-byte character).
std::string utf8_prefix(std::string_view text, size_t max_bytes);

/// Length of the valid UTF-8 sequence starting at text[i], or 0 if it is invalid
/// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t utf8_sequence_length(std::string_view text, size_t i);

}  // namespace stepcalc
