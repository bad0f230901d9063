// SPDX-License-Identifier: Apache-2.0
#include "io/step_json.h"

#include <string>
#include <vector>

#include "base/input_limits.h"

namespace stepcalc {
namespace {

/// One item {progress_index, `tokens_key`}: `tokens` keeps `*tokens` when absent;
/// progress_index is required. The hot loop of a request (a step holds up to 65,536
/// items), so written out here: through read_fields (an indirect call per field) the
/// 512-decode step bench:c parsed ~8% slower.
Expected<bool> read_item(json::element item, const json::Path& path, std::string_view tokens_key, int64_t* progress,
                         int64_t* tokens) {
  json::object fields;
  if (item.get_object().get(fields) != simdjson::SUCCESS) return json::type_error(path, item, "an object");
  bool have_progress = false;
  for (auto f : fields) {
    const bool is_progress = f.key == "progress_index";
    if (!is_progress && f.key != tokens_key)
      return json::unknown_field(path, f.key, "progress_index, " + std::string(tokens_key));
    have_progress = have_progress || is_progress;
    auto v = json::read_int(f.value, path.key(f.key), 0, limits::kMaxTokens, false);
    if (!v) return v.error();
    *(is_progress ? progress : tokens) = v.value();
  }
  if (!have_progress) {
    const std::string where = path.key("progress_index").str();
    return json::missing_field(path, "progress_index", where + " is required (tokens already processed).");
  }
  return true;
}

/// The items of one list (prefill_requests or decode_requests) appended to `out`;
/// `default_tokens` < 0: `tokens_key` is required.
template <typename Item>
Expected<bool> read_items(simdjson::dom::array list, const json::Path& list_path, const char* tokens_key,
                          int64_t default_tokens, std::vector<Item>* out) {
  out->reserve(list.size());
  size_t i = 0;
  for (json::element item : list) {
    const json::Path item_path = list_path.index(i++);
    int64_t progress = 0, tokens = default_tokens;
    auto ok = read_item(item, item_path, tokens_key, &progress, &tokens);
    if (!ok) return ok.error();
    if (tokens < 0) return json::missing_field(item_path, tokens_key);
    out->push_back({progress, tokens});
  }
  return true;
}

}  // namespace

Expected<Step> step_from_json(json::element e, const json::Path& path) {
  Step step;
  size_t total = 0;
  auto read = json::read_fields(
      e, path, [&](std::string_view key, json::element value, const json::Path& where) -> Expected<bool> {
        const bool prefill = key == "prefill_requests";
        if (!prefill && key != "decode_requests")
          return json::unknown_field(path, key, "prefill_requests, decode_requests");
        simdjson::dom::array list;
        if (value.get_array().get(list) != simdjson::SUCCESS) return json::type_error(where, value, "an array");
        total += list.size();
        if (total > static_cast<size_t>(limits::kMaxRequestsPerStep))
          return make_error("too_many_requests", where.str(),
                            "The step holds " + std::to_string(total) + " requests; a step may hold at most " +
                                std::to_string(limits::kMaxRequestsPerStep) + " (prefill and decode together).");
        if (prefill) return read_items(list, where, "num_new_prefill_tokens", -1, &step.prefill);
        return read_items(list, where, "num_new_decode_tokens", 1, &step.decode);
      });
  if (!read) return read.error();
  return step;
}

}  // namespace stepcalc
