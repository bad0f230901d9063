// SPDX-License-Identifier: Apache-2.0
// libFuzzer target over the kernel-pack decoder: any bytes go to KernelDb::unpack, to
// unpack_parts (the input cut in two), and to a KernelRegistry (decoded now and
// deferred). Beyond "no crash, no sanitizer report, no huge allocation", it checks
// that a refusal has a code and a message, and that every lookup on a pack that
// decoded gives a finite time >= 0, or NaN exactly when its table is missing.
//   build: scripts/test-hardening.sh (clang, -DSTEPCALC_FUZZ=ON)
//   run:   build/sanitize/stepcalc_fuzz_kernel_pack CORPUS_COPY (seeded with build/kernels/*.bin)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/kernel_db.h"
#include "kernels/kernel_pack.h"
#include "kernels/kernel_registry.h"

namespace {

using stepcalc::KernelDb;
using stepcalc::KernelDtype;
using stepcalc::KernelTime;
using stepcalc::LookupHow;

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_kernel_pack: %s: %.400s\n", what, detail.c_str());
  std::abort();
}

void check_error(const stepcalc::Error& e, const char* what) {
  if (e.code.empty() || e.message.empty()) fail(what, "error without code or message");
}

void check_time(const KernelDb& db, const KernelTime& t, const char* what) {
  const std::string described = db.describe(t);
  if (t.how == LookupHow::kMissing) {
    if (!std::isnan(t.us)) fail(what, "a missing table gave a number: " + described);
    return;
  }
  if (!std::isfinite(t.us) || t.us < 0) fail(what, "time is not finite and >= 0: " + described);
}

/// Lookups of every kind, at ordinary shapes and at the edges of the axes.
void exercise(const KernelDb& db) {
  (void)db.gpu();
  (void)db.version();
  (void)db.parts();
  (void)db.coverage();
  for (KernelDtype dtype : {KernelDtype::kBf16, KernelDtype::kFp8}) {
    for (double m : {1.0, 3.0, 1000.0, 1e7}) {
      check_time(db, db.gemm(dtype, m, 4096, 4096), "gemm");
      check_time(db, db.gemm(dtype, m, 1, 1e6), "gemm edge");
    }
    for (double kv : {0.0, 1.0, 5000.0, 1e9}) {
      check_time(db, db.decode_attention(1, kv, 32, 8, 128, dtype), "decode_attention");
      check_time(db, db.decode_attention(512, kv, 1, 1, 64, dtype), "decode_attention small heads");
    }
    for (double seq : {1.0, 777.0, 1e6}) {
      check_time(db, db.prefill_attention(1, seq, 32, 8, 128, dtype), "prefill_attention");
      check_time(db, db.mla_prefill(2, seq, 16, dtype), "mla_prefill");
      check_time(db, db.mla_decode(64, seq, 16, dtype), "mla_decode");
    }
    for (double tokens : {1.0, 4096.0, 1e7}) check_time(db, db.moe(dtype, tokens, 4096, 14336, 8, 2, 1, 1), "moe");
  }
  for (int tp : {1, 2, 3, 8, 64})
    for (double elements : {1.0, 4096.0 * 2048, 1e12}) check_time(db, db.allreduce(tp, elements), "allreduce");
}

void check_db(const stepcalc::Expected<std::shared_ptr<const KernelDb>>& db, const char* what) {
  if (!db) return check_error(db.error(), what);
  if (db.value() == nullptr) fail(what, "a decoded pack without a database");
  exercise(*db.value());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* raw, size_t size) {
  check_db(KernelDb::unpack(raw, size), "unpack");
  // The checksum refuses nearly every mutation: the same bytes again with a matching
  // trailer, so the decoder behind it is fuzzed too.
  std::vector<uint8_t> fixed(raw, raw + size);
  if (size >= 8) {
    const uint32_t crc = stepcalc::pack_crc32(fixed.data(), size - 4);
    for (int b = 0; b < 4; ++b) fixed[size - 4 + b] = static_cast<uint8_t>(crc >> (8 * b));
  }
  const uint8_t* data = fixed.data();
  check_db(KernelDb::unpack(data, size), "unpack");

  // The same bytes as two parts of one GPU and version, cut where the first byte says.
  const size_t cut = size ? data[0] % (size + 1) : 0;
  check_db(KernelDb::unpack_parts({{data, cut}, {data + cut, size - cut}}), "unpack_parts");

  for (bool deferred : {false, true}) {
    stepcalc::KernelRegistry registry;
    auto loaded = deferred ? registry.add_pack_deferred(data, size) : registry.add_pack(data, size);
    if (!loaded) {
      check_error(loaded.error(), "add_pack");
      continue;
    }
    check_db(registry.get(loaded->gpu, loaded->version), deferred ? "registry deferred" : "registry");
    // A second copy replaces the first; a lookup of another version is an error, never a crash.
    (void)registry.add_pack(data, size);
    auto other = registry.get(loaded->gpu, "vllm-0.0.0");
    if (!other) check_error(other.error(), "registry other version");
  }
  return 0;
}
