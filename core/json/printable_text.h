// SPDX-License-Identifier: Apache-2.0
// Text from a request made safe to print on a terminal line: an id or a key holding a
// newline or an escape sequence must not fake or erase other output lines.
#pragma once

#include <string>
#include <string_view>

namespace stepcalc {

/// `text` with everything a terminal would act on written as an escape: `\n`, `\r`,
/// `\t`, `\\`, other control characters (C0, DEL, C1) and the Unicode controls that
/// move or reorder text (bidi embeddings, overrides and isolates, marks, line and
/// paragraph separators) as `\u{XXXX}`, and bytes that are not valid UTF-8 as `\xNN`.
/// Everything else, including printable non-ASCII text, passes unchanged, so the
/// result is one line of valid UTF-8 with no control characters.
std::string printable_text(std::string_view text);

}  // namespace stepcalc
