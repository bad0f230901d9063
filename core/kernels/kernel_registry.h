// SPDX-License-Identifier: Apache-2.0
// The kernel packs loaded so far, by GPU and vLLM version. The CLI fills one from a
// directory, the Wasm module from bytes the loader fetched; pricing asks it for the
// database of the request's GPU and version. Errors name the GPU, the version and
// what is missing; nothing here ever prices with an absent table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "kernels/kernel_db.h"

namespace stepcalc {

struct DecodedPack;

/// What one add_pack call loaded.
struct LoadedPack {
  std::string gpu;      ///< "H100"
  std::string version;  ///< "vllm-0.14.0"
  std::string part;     ///< "gemm-bf16"
};

/// Reads one pack file by name ("h100-vllm-0.14.0-gemm-bf16.bin"): true with its bytes
/// in `bytes`, false when there is no such file, or an error (io_error, too_large).
using PackSource = std::function<Expected<bool>(const std::string& file, std::vector<uint8_t>* bytes)>;

class KernelRegistry {
 public:
  KernelRegistry();
  ~KernelRegistry();
  KernelRegistry(KernelRegistry&&) noexcept;
  KernelRegistry& operator=(KernelRegistry&&) noexcept;

  /// Adds one pack file, decoded now (the bytes are not kept). A part already loaded
  /// is replaced. Errors: corrupt_kernels, naming the GPU and version when known; the
  /// packs loaded before stay as they were.
  Expected<LoadedPack> add_pack(const uint8_t* data, size_t size);

  /// Adds one pack file whose tables are decoded on the first get() of its GPU and
  /// version (the bytes are copied; only the names are read now). For the CLI, which
  /// loads a directory but prices most requests without measured tables. A corrupt
  /// pack is then get()'s error.
  Expected<LoadedPack> add_pack_deferred(const uint8_t* data, size_t size);

  /// The database of `gpu` (case-insensitive) at `version` ("" = the GPU's default,
  /// docs/KERNELS.md). Errors, with `path` as given: unknown_gpu (listing the GPUs),
  /// unknown_kernels (listing the GPU's versions), kernels_not_loaded (naming the GPU
  /// and version: no pack of it was added), corrupt_kernels (a deferred pack).
  Expected<std::shared_ptr<const KernelDb>> get(const std::string& gpu, const std::string& version = "",
                                                const std::string& path = "gpu") const;

  /// The parts added for a GPU (exact name) and version, sorted; empty if none.
  std::vector<std::string> loaded_parts(const std::string& gpu, const std::string& version) const;

  /// Whether any pack was added.
  bool empty() const { return sets_.empty(); }

#ifndef __EMSCRIPTEN__  // native only: the Wasm builds have no threads (and keep their bytes)
  /// What a thread's registry asks for a GPU and version it does not hold yet (the same
  /// arguments as get()): the shared registry's answer, asked under a lock.
  using SharedGet = std::function<Expected<std::shared_ptr<const KernelDb>>(
      const std::string& gpu, const std::string& version, const std::string& path)>;

  /// A registry for one thread pricing beside others: its get() asks `shared` the first time a
  /// GPU and version is asked (the shared registry reads and decodes then, or gives its error)
  /// and keeps a copy with lookup memos of its own (KernelDb::with_own_memo), which are not
  /// thread-safe. The planner's threads (docs/PLAN.md).
  static KernelRegistry thread_view(SharedGet shared);
#endif

  /// Where get() reads a GPU and version's packs by name, the first time it is asked
  /// for them (the CLI's --kernels DIR): nothing is read for a request that needs no
  /// measured tables, and only the files of the set it names. A file that is absent
  /// leaves its part unloaded; a read error is get()'s error.
  void set_pack_source(PackSource source) { source_ = std::move(source); }

 private:
  struct Set;
  Set& set_of(const std::string& gpu, const std::string& version) const;
  Expected<LoadedPack> defer(const uint8_t* data, size_t size) const;
  Expected<bool> fetch(const std::string& gpu, const std::string& version) const;
  PackSource source_;
#ifndef __EMSCRIPTEN__
  SharedGet shared_;  ///< thread_view's: asked for what sets_ does not hold
#endif
  struct Fetched {
    std::string gpu, version;
    Expected<bool> outcome;  ///< what reading its files gave, returned again on every get()
  };
  mutable std::vector<Fetched> fetched_;
  // Deferred packs are decoded inside get(), hence mutable (single-threaded use).
  mutable std::vector<std::unique_ptr<Set>> sets_;
};

/// The request-level check of a GPU and kernel version name, without any pack: the
/// GPU's exact name and the version resolved ("" -> default). Errors: unknown_gpu at
/// `gpu_path`, unknown_kernels at `kernels_path`.
Expected<std::pair<std::string, std::string>> resolve_kernels(const std::string& gpu, const std::string& version,
                                                              const std::string& gpu_path = "gpu",
                                                              const std::string& kernels_path = "kernels");

/// An empty registry (pricing that needs no measured tables).
const KernelRegistry& no_kernels();

}  // namespace stepcalc
