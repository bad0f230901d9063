// SPDX-License-Identifier: Apache-2.0
// JSON of the GPU presets and the kernel packs built (kernels/kernel_catalogue.h).
#include "io/kernel_catalogue_json.h"

#include "kernels/embedded_data.h"
#include "kernels/kernel_catalogue.h"

namespace stepcalc {

// The GPU list is generated at build time as JSON text (tools/pack-tables.mjs) from the
// same sources as the compiled-in structs: writing it verbatim keeps the Wasm module
// smaller than a writer per field would.
void write_gpu_specs(JsonWriter& w) { w.raw(embedded::kGpuPresetsJson); }

// [{gpu, version, default, parts: [{name, file, bytes, gzip_bytes}], coverage: {...}}]
// (docs/KERNELS.md): the parts from the structs (their sizes are there anyway), the coverage
// as the JSON text tools/pack-kernels.mjs wrote.
void write_kernel_sets(JsonWriter& w) {
  w.begin_array();
  for (size_t i = 0; i < embedded::kKernelSetCount; ++i) {
    const embedded::KernelSetInfo& e = embedded::kKernelSets[i];
    const KernelSet& set = kernel_sets()[i];
    w.begin_object().field("gpu", e.gpu).field("version", e.version).field("default", e.is_default);
    w.key("parts").begin_array();
    for (const KernelPartInfo& p : set.parts)
      w.object({{"name", p.name},
                {"file", set.file_name(p.name)},
                {"bytes", static_cast<int64_t>(p.bytes)},
                {"gzip_bytes", static_cast<int64_t>(p.gzip_bytes)}});
    w.end_array().key("coverage").raw(e.coverage_json).end_object();
  }
  w.end_array();
}

std::string loaded_pack_json(const LoadedPack& p) {
  JsonWriter w;
  w.begin_object().field("gpu", p.gpu).field("version", p.version).field("part", p.part).end_object();
  return w.take();
}

}  // namespace stepcalc
