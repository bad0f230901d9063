// SPDX-License-Identifier: Apache-2.0
#include "serving/random.h"

#include <limits>

namespace stepcalc {
namespace {

uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

constexpr double kLn2 = 0.6931471805599453094;

}  // namespace

SeededRandom::SeededRandom(uint64_t seed) {
  uint64_t state = seed;
  for (uint64_t& s : s_) s = splitmix64(&state);
}

uint64_t SeededRandom::next_bits() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double SeededRandom::uniform() { return static_cast<double>(next_bits() >> 11) * (1.0 / 9007199254740992.0); }

int64_t SeededRandom::uniform_int(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  // Rejection keeps every value equally likely.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % span;
  uint64_t bits = next_bits();
  while (bits >= limit) bits = next_bits();
  return lo + static_cast<int64_t>(bits % span);
}

double SeededRandom::exponential(double mean) { return -mean * portable_log(1.0 - uniform()); }

double SeededRandom::standard_normal() {
  double sum = 0;
  for (int i = 0; i < 12; ++i) sum += uniform();
  return sum - 6.0;
}

double portable_log(double x) {
  if (!(x > 0)) return x == 0 ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  if (x > std::numeric_limits<double>::max()) return x;  // +inf
  // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); exact scalings by powers of two.
  int e = 0;
  double m = x;
  while (m >= 1.4142135623730951) m *= 0.5, ++e;
  while (m < 0.7071067811865476) m *= 2.0, --e;
  // log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716: 12 terms reach 1e-19.
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double term = s, sum = 0;
  for (int k = 1; k <= 23; k += 2) {
    sum += term / k;
    term *= s2;
  }
  return 2.0 * sum + e * kLn2;
}

}  // namespace stepcalc
