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

/// One switch of "corrected.switches": true or false.
Expected<bool> read_switch(std::string_view key, json::element value, const json::Path& path, const json::Path& where,
                           CorrectedOverrides* out) {
  const int index = corrected_switch_index(key);
  if (index < 0) return json::unknown_field(path, key, names_of(kCorrectedSwitchInfo));
  auto on = json::read_bool(value, where);
  if (!on) return on.error();
  out->switch_state[index] = on.value() ? 1 : 0;
  return true;
}

/// One parameter of "corrected.params": a number in the parameter's range.
Expected<bool> read_param(std::string_view key, json::element value, const json::Path& path, const json::Path& where,
                          CorrectedOverrides* out) {
  const int index = corrected_param_index(key);
  if (index < 0) return json::unknown_field(path, key, names_of(kCorrectedParamInfo));
  const CorrectedParamInfo& info = kCorrectedParamInfo[index];
  auto v = json::read_number_in(value, where, info.min, info.max);
  if (!v) return v.error();
  out->param[index] = v.value();
  out->param_set[index] = true;
  return true;
}

}  // namespace

Expected<CorrectedOverrides> corrected_from_json(json::element e, const json::Path& path) {
  CorrectedOverrides out;
  out.present = true;
  auto read = json::read_fields(
      e, path, [&](std::string_view key, json::element items, const json::Path& where) -> Expected<bool> {
        const bool switches = key == "switches";
        if (!switches && key != "params") return json::unknown_field(path, key, "switches, params");
        return json::read_fields(
            items, where, [&](std::string_view item, json::element value, const json::Path& at) -> Expected<bool> {
              return switches ? read_switch(item, value, where, at, &out) : read_param(item, value, where, at, &out);
            });
      });
  if (!read) return read.error();
  return out;
}

}  // namespace stepcalc
