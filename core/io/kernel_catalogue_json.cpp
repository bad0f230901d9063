// SPDX-License-Identifier: Apache-2.0
// JSON of the GPU presets and the kernel packs built (kernels/kernel_catalogue.h).
#include "io/kernel_catalogue_json.h"

#include "kernels/embedded_data.h"
#include "kernels/kernel_catalogue.h"

namespace stepcalc {

// Both lists are generated at build time as JSON text (tools/pack-tables.mjs,
// tools/pack-kernels.mjs) from the same sources as the compiled-in structs: writing
// them verbatim keeps the Wasm module smaller than a writer per field would.
void write_gpu_specs(JsonWriter& w) { w.raw(embedded::kGpuPresetsJson); }

void write_kernel_sets(JsonWriter& w) { w.raw(embedded::kKernelSetsJson); }

std::string loaded_pack_json(const LoadedPack& p) {
  JsonWriter w;
  w.begin_object().field("gpu", p.gpu).field("version", p.version).field("part", p.part).end_object();
  return w.take();
}

}  // namespace stepcalc
