// SPDX-License-Identifier: Apache-2.0
// The pricing modes a request may name (`"mode"`), default first, each with one line
// for people. The catalogue, the unknown_mode error and the d.ts check read this table.
#pragma once

#include <string>
#include <string_view>

namespace stepcalc {

struct ModeInfo {
  const char* name;
  const char* description;  ///< one line for people
};

inline constexpr ModeInfo kModes[] = {
    {"blis-v2",
     "The reference step model, reproduced exactly: the H100 FP8 GEMM and attention MFU tables it ships, "
     "max(prefill, decode) per step and 100 µs of CPU per layer."},
    {"corrected",
     "blis-v2 with seven switches that each fix one of its documented weaknesses, and a CPU cost per step and per "
     "request fitted on real vLLM steps (docs/CORRECTED-MODE.md)."},
    {"measured",
     "The forward pass vLLM runs for this model, operator by operator, from measured vLLM kernel tables of the "
     "chosen GPU, plus the CPU cost of a step (docs/MEASURED-MODE.md)."},
};

/// The mode every request gets when it names none.
inline constexpr const char* kDefaultMode = kModes[0].name;

/// Whether `name` is a known mode.
inline bool is_known_mode(std::string_view name) {
  for (const ModeInfo& m : kModes)
    if (name == m.name) return true;
  return false;
}

/// "blis-v2, corrected, measured" for messages.
inline std::string mode_name_list() {
  std::string out;
  for (const ModeInfo& m : kModes) out += (out.empty() ? "" : ", ") + std::string(m.name);
  return out;
}

}  // namespace stepcalc
