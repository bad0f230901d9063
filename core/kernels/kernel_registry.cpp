// SPDX-License-Identifier: Apache-2.0
// KernelRegistry: packs by (GPU, version), re-decoded into one KernelDb per add.
#include "kernels/kernel_registry.h"

#include <algorithm>

#include "kernels/gpu_spec.h"
#include "kernels/kernel_catalogue.h"
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
  // A GPU measured on no table reads its sibling's (scaled by the measured mode).
  if (const GpuSpec* sibling = spec->kernels_from.empty() ? nullptr : find_gpu_spec(spec->kernels_from)) spec = sibling;
  if (version.empty()) return std::make_pair(spec->name, spec->default_kernels);
  for (const std::string& v : spec->kernel_versions) {
    if (v == version) return std::make_pair(spec->name, v);
  }
  return make_error("unknown_kernels", kernels_path,
                    "No measured kernel tables '" + shown(version) + "' for " + spec->name +
                        "; available: " + join(spec->kernel_versions) + " (default " + spec->default_kernels + ").");
}

struct KernelRegistry::Set {
  std::string gpu, version;
  std::vector<DecodedPack> decoded;                                    ///< parts with tables
  std::vector<std::pair<std::string, std::vector<uint8_t>>> deferred;  ///< part, bytes not decoded yet
  std::shared_ptr<const KernelDb> db;                                  ///< all decoded parts joined

  // Joins `decoded` plus `extra` (replacing a part of the same name); on success the
  // set takes them, on failure nothing changes.
  Expected<bool> join_with(std::vector<DecodedPack> extra) {
    std::vector<const DecodedPack*> list;
    for (const DecodedPack& p : decoded) {
      bool replaced = false;
      for (const DecodedPack& e : extra) replaced = replaced || e.part == p.part;
      if (!replaced) list.push_back(&p);
    }
    for (const DecodedPack& e : extra) list.push_back(&e);
    auto joined = join_packs(list);
    if (!joined) return joined.error();
    std::vector<DecodedPack> next;
    for (const DecodedPack* p : list) next.push_back(*p);
    decoded = std::move(next);
    db = joined.value();
    return true;
  }

  // Decodes what is deferred and joins everything.
  Expected<bool> settle() {
    std::vector<DecodedPack> extra;
    for (const auto& [part, bytes] : deferred) {
      auto pack = decode_pack(bytes.data(), bytes.size());
      if (!pack) return pack.error();
      if (pack->gpu != gpu || pack->version != version || pack->part != part) {
        return make_error(
            "corrupt_kernels", "",
            "The kernel pack for " + gpu + " " + version + " (" + part + ") changed while it was loaded.");
      }
      extra.push_back(std::move(pack).value());
    }
    auto joined = join_with(std::move(extra));
    if (joined) deferred.clear();
    return joined;
  }
};

KernelRegistry::KernelRegistry() = default;
KernelRegistry::~KernelRegistry() = default;
KernelRegistry::KernelRegistry(KernelRegistry&&) noexcept = default;
KernelRegistry& KernelRegistry::operator=(KernelRegistry&&) noexcept = default;

#ifndef __EMSCRIPTEN__
KernelRegistry KernelRegistry::thread_view(SharedGet shared) {
  KernelRegistry view;
  view.shared_ = std::move(shared);
  return view;
}
#endif

KernelRegistry::Set& KernelRegistry::set_of(const std::string& gpu, const std::string& version) const {
  for (const auto& set : sets_) {
    if (set->gpu == gpu && set->version == version) return *set;
  }
  sets_.push_back(std::make_unique<Set>());
  sets_.back()->gpu = gpu;
  sets_.back()->version = version;
  return *sets_.back();
}

Expected<LoadedPack> KernelRegistry::add_pack(const uint8_t* data, size_t size) {
  auto pack = decode_pack(data, size);
  if (!pack) return pack.error();
  const LoadedPack loaded{pack->gpu, pack->version, pack->part};
  Set& set = set_of(loaded.gpu, loaded.version);
  std::vector<DecodedPack> extra;
  extra.push_back(std::move(pack).value());
  auto joined = set.join_with(std::move(extra));
  if (!joined) {
    if (set.decoded.empty() && set.deferred.empty()) sets_.pop_back();  // a new, empty set
    return joined.error();
  }
  for (size_t i = 0; i < set.deferred.size(); ++i) {
    if (set.deferred[i].first == loaded.part) set.deferred.erase(set.deferred.begin() + i);
  }
  return loaded;
}

Expected<LoadedPack> KernelRegistry::add_pack_deferred(const uint8_t* data, size_t size) { return defer(data, size); }

Expected<LoadedPack> KernelRegistry::defer(const uint8_t* data, size_t size) const {
  auto header = decode_pack_header(data, size);
  if (!header) return header.error();
  const GpuSpec* spec = find_gpu_spec(header->gpu);
  if (spec == nullptr || spec->name != header->gpu) {
    return make_error("corrupt_kernels", "",
                      "A kernel pack names a GPU this build does not know ('" + shown(header->gpu) +
                          "'); known: " + gpu_spec_names() + ".");
  }
  const LoadedPack loaded{header->gpu, header->version, header->part};
  Set& set = set_of(loaded.gpu, loaded.version);
  for (size_t i = 0; i < set.deferred.size(); ++i) {
    if (set.deferred[i].first == loaded.part) set.deferred.erase(set.deferred.begin() + i);
  }
  set.deferred.emplace_back(loaded.part, std::vector<uint8_t>(data, data + size));
  set.db = nullptr;
  return loaded;
}

Expected<std::shared_ptr<const KernelDb>> KernelRegistry::get(const std::string& gpu, const std::string& version,
                                                              const std::string& path) const {
  auto which = resolve_kernels(gpu, version, path, path == "gpu" ? "kernels" : path);
  if (!which) return which.error();
#ifndef __EMSCRIPTEN__
  if (shared_) {  // a thread's view: its own copy, else the shared registry's answer, copied
    for (const auto& s : sets_)
      if (s->gpu == which->first && s->version == which->second) return s->db;
    auto db = shared_(gpu, version, path);
    if (!db) return db.error();
    sets_.push_back(std::make_unique<Set>());
    sets_.back()->gpu = which->first;
    sets_.back()->version = which->second;
    sets_.back()->db = db.value()->with_own_memo();
    return sets_.back()->db;
  }
#endif
  if (source_) {
    auto fetched = fetch(which->first, which->second);
    if (!fetched) return make_error(fetched.error().code, path, fetched.error().message);
  }
  Set* set = nullptr;
  for (const auto& s : sets_) {
    if (s->gpu == which->first && s->version == which->second) set = s.get();
  }
  if (set != nullptr && !set->deferred.empty()) {
    auto settled = set->settle();
    if (!settled) return make_error(settled.error().code, path, settled.error().message);
  }
  if (set == nullptr || !set->db) {
    return make_error("kernels_not_loaded", path,
                      "The measured kernel tables for " + which->first + " " + which->second +
                          " are not loaded (JavaScript: await loadKernels('" + which->first + "', '" + which->second +
                          "'); CLI: --kernels DIR with its packs).");
  }
  return set->db;
}

Expected<bool> KernelRegistry::fetch(const std::string& gpu, const std::string& version) const {
  for (const Fetched& f : fetched_)
    if (f.gpu == gpu && f.version == version) return f.outcome;
  // Each set's files are read once; an error is remembered and given again.
  const auto read_all = [&]() -> Expected<bool> {
    const KernelSet* set = find_kernel_set(gpu, version);
    if (set == nullptr) return true;
    std::vector<uint8_t> bytes;
    for (const KernelPartInfo& part : set->parts) {
      const std::string file = set->file_name(part.name);
      bytes.clear();
      auto found = source_(file, &bytes);
      if (!found) return found.error();
      if (!found.value()) continue;
      auto added = defer(bytes.data(), bytes.size());
      if (!added) return make_error(added.error().code, "", file + ": " + added.error().message);
    }
    return true;
  };
  fetched_.push_back({gpu, version, read_all()});
  return fetched_.back().outcome;
}

std::vector<std::string> KernelRegistry::loaded_parts(const std::string& gpu, const std::string& version) const {
  std::vector<std::string> parts;
  for (const auto& set : sets_) {
    if (set->gpu != gpu || set->version != version) continue;
    for (const DecodedPack& p : set->decoded) parts.push_back(p.part);
    for (const auto& d : set->deferred) parts.push_back(d.first);
  }
  for (size_t i = 1; i < parts.size(); ++i) {  // insertion sort: a handful of names
    for (size_t j = i; j > 0 && parts[j] < parts[j - 1]; --j) std::swap(parts[j], parts[j - 1]);
  }
  return parts;
}

const KernelRegistry& no_kernels() {
  static const KernelRegistry empty;
  return empty;
}

}  // namespace stepcalc
