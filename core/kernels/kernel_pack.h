// SPDX-License-Identifier: Apache-2.0
// Decoding of one kernel pack (tools/pack-kernels.mjs; format in docs/KERNELS.md).
// Internal to core/kernels/: KernelDb::unpack is the public entry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/measured_table.h"

namespace stepcalc {

/// What one pack file holds.
struct DecodedPack {
  std::string gpu;      ///< e.g. "H100"
  std::string version;  ///< e.g. "vllm-0.14.0"
  std::string part;     ///< e.g. "gemm-bf16"
  std::vector<std::shared_ptr<const MeasuredTable>> tables;
};

/// Decodes a pack. Every read is bounds-checked and every count limited, so
/// truncated, corrupt or hostile bytes give an error (code "corrupt_kernels", naming
/// the GPU and version when the header got that far), never a crash or a huge allocation.
Expected<DecodedPack> decode_pack(const uint8_t* data, size_t size);

/// Only the names of a pack (GPU, version, part; no tables): cheap, for deferred loading.
Expected<DecodedPack> decode_pack_header(const uint8_t* data, size_t size);

/// CRC-32 (IEEE 802.3, as zlib's) of `size` bytes: a pack ends with that of the bytes
/// before it, little-endian (tools/kernel-pack-format.mjs writes it).
uint32_t pack_crc32(const uint8_t* data, size_t size);

/// Latency code of 3 significant digits (see tools/kernel-pack-format.mjs) to microseconds,
/// and a predicted latency to the nearest code. Exposed for the round-trip tests.
double latency_of_code(int64_t code);
int64_t code_of_latency(double us);

}  // namespace stepcalc
