// SPDX-License-Identifier: Apache-2.0
// Printing user text safely: what the CLI prints from a request (plain lines and JSON)
// can never act on the terminal.
#include <string>

#include "doctest.h"
#include "json/json_writer.h"
#include "json/printable_text.h"

using stepcalc::printable_text;

TEST_CASE("printable_text leaves ordinary text, including non-ASCII, unchanged") {
  CHECK(printable_text("") == "");
  CHECK(printable_text("llama-3.1-8b case 12: expected 5, got 6") == "llama-3.1-8b case 12: expected 5, got 6");
  CHECK(printable_text("Größe 表 😀") == "Größe 表 😀");
}

TEST_CASE("printable_text escapes line breaks, escape sequences and other controls") {
  CHECK(printable_text("x\n160 passed, 0 failed") == "x\\n160 passed, 0 failed");
  CHECK(printable_text("a\rb\tc") == "a\\rb\\tc");
  CHECK(printable_text("\x1b[2K\x1b[1A") == "\\u{001B}[2K\\u{001B}[1A");
  CHECK(printable_text(std::string("nul\0end", 7)) == "nul\\u{0000}end");
  CHECK(printable_text("del\x7f") == "del\\u{007F}");
  CHECK(printable_text("c1 \xc2\x9b"
                       "31m") == "c1 \\u{009B}31m");  // U+009B: the one-byte CSI
  CHECK(printable_text("rtl \xe2\x80\xae"
                       "exe.txt") == "rtl \\u{202E}exe.txt");
  CHECK(printable_text("ls \xe2\x80\xa8"
                       "next") == "ls \\u{2028}next");
  CHECK(printable_text("iso \xe2\x81\xa6x") == "iso \\u{2066}x");
}

TEST_CASE("printable_text writes a backslash doubled, so escapes cannot be forged") {
  CHECK(printable_text("a\\nb") == "a\\\\nb");
  CHECK(printable_text("\\") == "\\\\");
}

TEST_CASE("printable_text writes bytes that are not UTF-8 as \\xNN") {
  CHECK(printable_text("\xff") == "\\xFF");
  CHECK(printable_text("ok\xc3") == "ok\\xC3");                         // truncated sequence
  CHECK(printable_text("\xc0\xaf") == "\\xC0\\xAF");                    // overlong slash
  CHECK(printable_text("\xed\xa0\x80") == "\\xED\\xA0\\x80");           // a surrogate
  CHECK(printable_text("\xf4\x90\x80\x80") == "\\xF4\\x90\\x80\\x80");  // above U+10FFFF
}

TEST_CASE("printable_text output holds no control byte for any input byte") {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  const std::string out = printable_text(all);
  for (char c : out) {
    const auto u = static_cast<unsigned char>(c);
    CHECK_MESSAGE((u >= 0x20 && u != 0x7F), "byte " << static_cast<int>(u));
  }
}

TEST_CASE("json_quote writes terminal and bidi controls as \\u escapes (same text once parsed)") {
  CHECK(stepcalc::json_quote("a\x1b[2Kb") == "\"a\\u001b[2Kb\"");
  CHECK(stepcalc::json_quote("c1 \xc2\x9b") == "\"c1 \\u009b\"");
  CHECK(stepcalc::json_quote("rtl \xe2\x80\xae") == "\"rtl \\u202e\"");
  CHECK(stepcalc::json_quote("ls \xe2\x80\xa8 ps \xe2\x80\xa9") == "\"ls \\u2028 ps \\u2029\"");
  CHECK(stepcalc::json_quote("bom \xef\xbb\xbf") == "\"bom \\ufeff\"");
  CHECK(stepcalc::json_quote("Größe 表 😀 \xc2\xa0") == "\"Größe 表 😀 \xc2\xa0\"");  // printable: unchanged
}
