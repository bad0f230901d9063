// SPDX-License-Identifier: Apache-2.0
#include "io/step_json.h"

#include <string>

#include "input_limits.h"

namespace stepcalc {
namespace {

/// One item {progress_index, `tokens_key`}: `tokens` keeps `*tokens` when absent;
/// progress_index is required.
Expected<bool> read_item(json::element item, const json::Path& path, std::string_view tokens_key, int64_t* progress,
                         int64_t* tokens) {
  bool have_progress = false;
  auto read = json::read_fields(
      item, path, [&](std::string_view key, json::element value, const json::Path& where) -> Expected<bool> {
        const bool is_progress = key == "progress_index";
        if (!is_progress && key != tokens_key)
          return json::unknown_field(path, key, "progress_index, " + std::string(tokens_key));
        have_progress = have_progress || is_progress;
        return json::store(json::read_int(value, where, 0, limits::kMaxTokens, false), is_progress ? progress : tokens);
      });
  if (!read) return read.error();
  if (!have_progress) {
    const std::string where = path.key("progress_index").str();
    return json::missing_field(path, "progress_index", where + " is required (tokens already processed).");
  }
  return true;
}

/// The items of "prefill_requests" (`prefill`) or "decode_requests", appended to `step`.
Expected<bool> read_requests(json::element value, const json::Path& list_path, bool prefill, size_t* total,
                             Step* step) {
  simdjson::dom::array list;
  if (value.get_array().get(list) != simdjson::SUCCESS) return json::type_error(list_path, value, "an array");
  *total += list.size();
  if (*total > static_cast<size_t>(limits::kMaxRequestsPerStep))
    return make_error("too_many_requests", list_path.str(),
                      "The step holds " + std::to_string(*total) + " requests; a step may hold at most " +
                          std::to_string(limits::kMaxRequestsPerStep) + " (prefill and decode together).");
  const char* tokens_key = prefill ? "num_new_prefill_tokens" : "num_new_decode_tokens";
  if (prefill)
    step->prefill.reserve(list.size());
  else
    step->decode.reserve(list.size());
  size_t i = 0;
  for (json::element item : list) {
    const json::Path item_path = list_path.index(i++);
    int64_t progress = 0, tokens = prefill ? -1 : 1;
    auto ok = read_item(item, item_path, tokens_key, &progress, &tokens);
    if (!ok) return ok.error();
    if (prefill && tokens < 0) return json::missing_field(item_path, tokens_key);
    if (prefill)
      step->prefill.push_back({progress, tokens});
    else
      step->decode.push_back({progress, tokens});
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
        return read_requests(value, where, prefill, &total, &step);
      });
  if (!read) return read.error();
  return step;
}

}  // namespace stepcalc
