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
  json::object r;
  if (item.get_object().get(r) != simdjson::SUCCESS) return json::type_error(path, item, "an object");
  bool have_progress = false;
  for (auto f : r) {
    int64_t* target = nullptr;
    if (f.key == "progress_index")
      target = progress, have_progress = true;
    else if (f.key == tokens_key)
      target = tokens;
    else
      return json::unknown_field(path, f.key, "progress_index, " + std::string(tokens_key));
    auto v = json::read_int(f.value, path.key(f.key), 0, limits::kMaxTokens, false);
    if (!v) return v.error();
    *target = v.value();
  }
  if (!have_progress) {
    const std::string where = path.key("progress_index").str();
    return json::missing_field(path, "progress_index", where + " is required (tokens already processed).");
  }
  return true;
}

}  // namespace

Expected<Step> step_from_json(json::element e, const json::Path& path) {
  json::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return json::type_error(path, e, "an object");
  Step step;
  size_t total = 0;
  for (auto field : o) {
    const bool prefill = field.key == "prefill_requests";
    if (!prefill && field.key != "decode_requests")
      return json::unknown_field(path, field.key, "prefill_requests, decode_requests");
    const json::Path list_path = path.key(field.key);
    simdjson::dom::array list;
    if (field.value.get_array().get(list) != simdjson::SUCCESS)
      return json::type_error(list_path, field.value, "an array");
    total += list.size();
    if (total > static_cast<size_t>(limits::kMaxRequestsPerStep))
      return make_error("too_many_requests", list_path.str(),
                        "The step holds " + std::to_string(total) + " requests; a step may hold at most " +
                            std::to_string(limits::kMaxRequestsPerStep) + " (prefill and decode together).");
    const char* tokens_key = prefill ? "num_new_prefill_tokens" : "num_new_decode_tokens";
    if (prefill)
      step.prefill.reserve(list.size());
    else
      step.decode.reserve(list.size());
    size_t i = 0;
    for (json::element item : list) {
      const json::Path item_path = list_path.index(i++);
      int64_t progress = 0, tokens = prefill ? -1 : 1;
      auto ok = read_item(item, item_path, tokens_key, &progress, &tokens);
      if (!ok) return ok.error();
      if (prefill && tokens < 0) return json::missing_field(item_path, tokens_key);
      if (prefill)
        step.prefill.push_back({progress, tokens});
      else
        step.decode.push_back({progress, tokens});
    }
  }
  return step;
}

}  // namespace stepcalc
