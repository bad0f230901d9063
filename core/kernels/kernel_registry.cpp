// KernelRegistry: packs by (GPU, version), re-decoded into one KernelDb per add.
#include "kernels/kernel_registry.h"

#include "kernels/gpu_spec.h"
#include "kernels/kernel_pack.h"

namespace stepcalc {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// At most 64 printable characters of a user-given name, for messages.
std::string shown(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (out.size() >= 64) return out + "...";
    out += (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f) ? c : '?';
  }
  return out;
}

}  // namespace

Expected<std::pair<std::string, std::string>> resolve_kernels(const std::string& gpu, const std::string& version,
                                                              const std::string& gpu_path,
                                                              const std::string& kernels_path) {
  const GpuSpec* spec = find_gpu_spec(gpu);
  if (spec == nullptr) {
    return make_error("unknown_gpu", gpu_path, "Unknown GPU '" + shown(gpu) + "'; known: " + gpu_spec_names() + ".");
  }
  if (version.empty()) return std::make_pair(spec->name, spec->default_kernels);
  for (const std::string& v : spec->kernel_versions) {
    if (v == version) return std::make_pair(spec->name, v);
  }
  return make_error("unknown_kernels", kernels_path,
                    "No measured kernel tables '" + shown(version) + "' for " + spec->name +
                        "; available: " + join(spec->kernel_versions) + " (default " + spec->default_kernels + ").");
}

Expected<LoadedPack> KernelRegistry::add_pack(const uint8_t* data, size_t size) {
  // Decode alone first: a corrupt pack must not spoil the parts already loaded.
  auto pack = decode_pack(data, size);
  if (!pack) return pack.error();
  const LoadedPack loaded{pack->gpu, pack->version, pack->part};
  Set& set = sets_[{loaded.gpu, loaded.version}];
  std::map<std::string, std::vector<uint8_t>> parts = set.parts;
  parts[loaded.part] = std::vector<uint8_t>(data, data + size);
  std::vector<PackBytes> spans;
  for (const auto& [name, bytes] : parts) spans.push_back({bytes.data(), bytes.size()});
  auto db = KernelDb::unpack_parts(spans);
  if (!db) {
    if (set.parts.empty()) sets_.erase({loaded.gpu, loaded.version});
    return db.error();
  }
  set.parts = std::move(parts);
  set.db = db.value();
  return loaded;
}

Expected<std::shared_ptr<const KernelDb>> KernelRegistry::get(const std::string& gpu, const std::string& version,
                                                              const std::string& path) const {
  auto which = resolve_kernels(gpu, version, path, path == "gpu" ? "kernels" : path);
  if (!which) return which.error();
  auto it = sets_.find(which.value());
  if (it == sets_.end() || !it->second.db) {
    return make_error("kernels_not_loaded", path,
                      "The measured kernel tables for " + which->first + " " + which->second +
                          " are not loaded (JavaScript: await loadKernels('" + which->first + "', '" + which->second +
                          "'); CLI: --kernels DIR with its packs).");
  }
  return it->second.db;
}

std::vector<std::string> KernelRegistry::loaded_parts(const std::string& gpu, const std::string& version) const {
  auto it = sets_.find({gpu, version});
  return it == sets_.end() || !it->second.db ? std::vector<std::string>{} : it->second.db->parts();
}

const KernelRegistry& no_kernels() {
  static const KernelRegistry empty;
  return empty;
}

}  // namespace stepcalc
