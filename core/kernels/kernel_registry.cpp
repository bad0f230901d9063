// KernelRegistry: packs by (GPU, version), re-decoded into one KernelDb per add.
#include "kernels/kernel_registry.h"

#include <algorithm>

#include "kernels/gpu_spec.h"
#include "kernels/kernel_db_impl.h"
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

struct KernelRegistry::Set {
  std::map<std::string, DecodedPack> decoded;            ///< part -> tables
  std::map<std::string, std::vector<uint8_t>> deferred;  ///< part -> bytes not decoded yet
  std::shared_ptr<const KernelDb> db;                    ///< all decoded parts joined
  std::string gpu, version;

  // Decodes what is deferred and joins everything; on failure nothing changes.
  Expected<bool> settle() {
    std::map<std::string, DecodedPack> next = decoded;
    for (const auto& [part, bytes] : deferred) {
      auto pack = decode_pack(bytes.data(), bytes.size());
      if (!pack) return pack.error();
      if (pack->gpu != gpu || pack->version != version || pack->part != part) {
        return make_error(
            "corrupt_kernels", "",
            "The kernel pack for " + gpu + " " + version + " (" + part + ") changed while it was loaded.");
      }
      next[part] = std::move(pack).value();
    }
    std::vector<const DecodedPack*> list;
    for (const auto& [part, pack] : next) list.push_back(&pack);
    auto joined = join_packs(list);
    if (!joined) return joined.error();
    decoded = std::move(next);
    deferred.clear();
    db = joined.value();
    return true;
  }
};

KernelRegistry::KernelRegistry() = default;
KernelRegistry::~KernelRegistry() = default;
KernelRegistry::KernelRegistry(KernelRegistry&&) noexcept = default;
KernelRegistry& KernelRegistry::operator=(KernelRegistry&&) noexcept = default;

Expected<LoadedPack> KernelRegistry::add_pack(const uint8_t* data, size_t size) {
  auto pack = decode_pack(data, size);
  if (!pack) return pack.error();
  const LoadedPack loaded{pack->gpu, pack->version, pack->part};
  std::unique_ptr<Set>& slot = sets_[{loaded.gpu, loaded.version}];
  const bool fresh = !slot;
  if (fresh) slot = std::make_unique<Set>(Set{{}, {}, nullptr, loaded.gpu, loaded.version});
  // Join on a copy: a pack that cannot join leaves the set as it was.
  Set trial = *slot;
  trial.decoded[loaded.part] = std::move(pack).value();
  trial.deferred.erase(loaded.part);
  auto settled = trial.settle();
  if (!settled) {
    if (fresh) sets_.erase({loaded.gpu, loaded.version});
    return settled.error();
  }
  *slot = std::move(trial);
  return loaded;
}

Expected<LoadedPack> KernelRegistry::add_pack_deferred(const uint8_t* data, size_t size) {
  auto header = decode_pack_header(data, size);
  if (!header) return header.error();
  if (find_gpu_spec(header->gpu) == nullptr || find_gpu_spec(header->gpu)->name != header->gpu) {
    return make_error("corrupt_kernels", "",
                      "A kernel pack names a GPU this build does not know ('" + shown(header->gpu) +
                          "'); known: " + gpu_spec_names() + ".");
  }
  const LoadedPack loaded{header->gpu, header->version, header->part};
  std::unique_ptr<Set>& slot = sets_[{loaded.gpu, loaded.version}];
  if (!slot) slot = std::make_unique<Set>(Set{{}, {}, nullptr, loaded.gpu, loaded.version});
  slot->deferred[loaded.part] = std::vector<uint8_t>(data, data + size);
  slot->decoded.erase(loaded.part);
  slot->db = nullptr;
  return loaded;
}

Expected<std::shared_ptr<const KernelDb>> KernelRegistry::get(const std::string& gpu, const std::string& version,
                                                              const std::string& path) const {
  auto which = resolve_kernels(gpu, version, path, path == "gpu" ? "kernels" : path);
  if (!which) return which.error();
  auto it = sets_.find(which.value());
  if (it != sets_.end() && !it->second->deferred.empty()) {
    auto settled = it->second->settle();
    if (!settled) return make_error(settled.error().code, path, settled.error().message);
  }
  if (it == sets_.end() || !it->second->db) {
    return make_error("kernels_not_loaded", path,
                      "The measured kernel tables for " + which->first + " " + which->second +
                          " are not loaded (JavaScript: await loadKernels('" + which->first + "', '" + which->second +
                          "'); CLI: --kernels DIR with its packs).");
  }
  return it->second->db;
}

std::vector<std::string> KernelRegistry::loaded_parts(const std::string& gpu, const std::string& version) const {
  auto it = sets_.find({gpu, version});
  if (it == sets_.end()) return {};
  std::vector<std::string> parts;
  for (const auto& [part, pack] : it->second->decoded) parts.push_back(part);
  for (const auto& [part, bytes] : it->second->deferred) parts.push_back(part);
  std::sort(parts.begin(), parts.end());
  return parts;
}

const KernelRegistry& no_kernels() {
  static const KernelRegistry empty;
  return empty;
}

}  // namespace stepcalc
