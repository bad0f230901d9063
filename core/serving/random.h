// SPDX-License-Identifier: Apache-2.0
// A seeded random source whose every draw is the same on every platform: the
// generator is integer arithmetic (xoshiro256**, seeded by splitmix64) and the
// variates use only correctly rounded IEEE operations (+, -, *, /), with a
// logarithm written out here rather than taken from the C library, whose last bit
// differs between the native build and the Wasm one.
#pragma once

#include <cstdint>

namespace stepcalc {

class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed);

  /// 64 uniformly distributed bits.
  uint64_t next_bits();
  /// Uniform in [0, 1) with 53 bits of resolution.
  double uniform();
  /// Whole number uniform in [lo, hi] (hi >= lo).
  int64_t uniform_int(int64_t lo, int64_t hi);
  /// Exponential with mean `mean` (inverse CDF of a uniform in (0, 1]).
  double exponential(double mean);
  /// Approximately standard normal: the sum of 12 uniforms minus 6 (Irwin-Hall),
  /// exact in mean and variance, bounded to +-6.
  double standard_normal();

 private:
  uint64_t s_[4];
};

/// Natural logarithm of x > 0 from +, -, *, / only (frexp-style reduction and the
/// atanh series), within a few ulp of the C library and bit-identical everywhere.
double portable_log(double x);

}  // namespace stepcalc
