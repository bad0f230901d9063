// SPDX-License-Identifier: Apache-2.0
// Which measured kernel set a GPU name and version mean, and its pack files: the one
// resolution the loader's loadKernels asks for instead of repeating it.
#include "api/api.h"
#include "json/json_writer.h"
#include "kernels/kernel_catalogue.h"

namespace stepcalc {

Expected<std::string> kernel_set_json(const std::string& gpu, const std::string& version) {
  auto which = resolve_kernels(gpu, version, "gpu", "kernels");
  if (!which) return which.error();
  const KernelSet* set = find_kernel_set(which->first, which->second);
  if (set == nullptr)  // a version a GPU's constants name but this build did not pack
    return make_error(
        "unknown_kernels", "kernels",
        "The measured kernel tables " + which->second + " for " + which->first + " are not in this build.");
  JsonWriter w;
  w.begin_object().field("gpu", set->gpu).field("version", set->version).key("parts").begin_array();
  for (const KernelPartInfo& p : set->parts) w.object({{"name", p.name}, {"file", set->file_name(p.name)}});
  w.end_array().end_object();
  return w.take();
}

}  // namespace stepcalc
