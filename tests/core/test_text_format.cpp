// SPDX-License-Identifier: Apache-2.0
// Numbers as text without printf (the Wasm module links no printf: its long-double
// formatting is kilobytes of the first view) and the JSON writer's buffer.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "doctest.h"
#include "json/json_writer.h"
#include "json/text_format.h"

namespace stepcalc {
namespace {

std::string printf_g(double v, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", digits, v);
  return text;
}

TEST_CASE("format_significant writes what printf's %.Ng writes") {
  for (double v : {0.0123456, 5.5, 1e-5, 123456.0, 0.0001, 0.00009999, 999.5, 9.995, 1.0, 100.0, 1e22, 3e-300, -2.6e-7,
                   42.0, 0.1, 7.0e15, 99.96}) {
    for (int digits : {1, 2, 3, 6}) CHECK_MESSAGE(format_significant(v, digits) == printf_g(v, digits), v);
  }
  CHECK(format_significant(0.0123456, 3) == "0.0123");
  CHECK(format_significant(0, 3) == "0");
  CHECK(format_significant(NAN, 3) == "nan");
  CHECK(format_significant(-INFINITY, 3) == "-inf");
  // Log-uniform doubles over 1e-12..1e12 and both signs: a mismatch could only come from a
  // value within an ulp of a decimal tie, which random values do not hit.
  std::mt19937_64 rng(25);
  std::uniform_real_distribution<double> exponent(-12, 12);
  int mismatches = 0;
  for (int i = 0; i < 100000; ++i) {
    const double v = (i % 2 ? -1 : 1) * std::pow(10.0, exponent(rng));
    const int digits = 1 + i % 6;
    if (format_significant(v, digits) != printf_g(v, digits)) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("the writer's buffer grows, copies and hands over the same text") {
  JsonWriter w;
  std::string expected = "[";
  w.begin_array();
  for (int i = 0; i < 5000; ++i) {
    w.value(static_cast<int64_t>(i) * 7919 - 20000).value(i * 0.37).value("k\"ey\n");
    expected += (i ? "," : "") + std::to_string(static_cast<int64_t>(i) * 7919 - 20000) + "," +
                format_double(i * 0.37) + "," + R"("k\"ey\n")";
  }
  w.end_array();
  expected += "]";
  CHECK(w.size() == expected.size());
  CHECK(w.str() == expected);
  CHECK(w.str() == expected);  // str() copies; the writer keeps its text
  CHECK(w.take() == expected);
  CHECK(w.size() == 0);
  CHECK(w.str().empty());
  w.begin_object().field("a", 1).end_object();  // usable again after take()
  CHECK(w.take() == R"({"a":1})");
  CHECK(JsonWriter().str().empty());
  CHECK(json_quote(std::string(300, 'x')) == "\"" + std::string(300, 'x') + "\"");
}

}  // namespace
}  // namespace stepcalc
