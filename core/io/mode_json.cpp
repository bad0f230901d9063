// SPDX-License-Identifier: Apache-2.0
#include "io/mode_json.h"

#include <string>

namespace stepcalc {
namespace {

template <typename Info, size_t N>
std::string names_of(const Info (&table)[N]) {
  std::string out;
  for (const Info& info : table) out += (out.empty() ? "" : ", ") + std::string(info.name);
  return out;
}

}  // namespace

Expected<CorrectedOverrides> corrected_from_json(json::element e, const json::Path& path) {
  json::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return json::type_error(path, e, "an object");
  CorrectedOverrides out;
  out.present = true;
  for (auto field : o) {
    const json::Path where = path.key(field.key);
    const bool switches = field.key == "switches";
    if (!switches && field.key != "params") return json::unknown_field(path, field.key, "switches, params");
    json::object items;
    if (field.value.get_object().get(items) != simdjson::SUCCESS)
      return json::type_error(where, field.value, "an object");
    for (auto item : items) {
      const json::Path item_path = where.key(item.key);
      if (switches) {
        const int index = corrected_switch_index(item.key);
        if (index < 0) return json::unknown_field(where, item.key, names_of(kCorrectedSwitchInfo));
        bool on = false;
        if (item.value.get_bool().get(on) != simdjson::SUCCESS)
          return json::type_error(item_path, item.value, "true or false");
        out.switch_state[index] = on ? 1 : 0;
      } else {
        const int index = corrected_param_index(item.key);
        if (index < 0) return json::unknown_field(where, item.key, names_of(kCorrectedParamInfo));
        const CorrectedParamInfo& info = kCorrectedParamInfo[index];
        auto v = json::read_number_in(item.value, item_path, info.min, info.max);
        if (!v) return v.error();
        out.param[index] = v.value();
        out.param_set[index] = true;
      }
    }
  }
  return out;
}

}  // namespace stepcalc
