// SPDX-License-Identifier: Apache-2.0
// The pricing modes a request may name (`"mode"`): an enum parsed once from the
// request, and one table of names in the enum's order, default first, each with one line
// for people. The catalogue, the unknown_mode error and the d.ts check read this table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stepcalc {

/// A pricing mode; the values follow kModes' order.
enum class Mode : uint8_t { kBlisV2, kCorrected, kMeasured };

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

static_assert(sizeof kModes / sizeof kModes[0] == static_cast<size_t>(Mode::kMeasured) + 1,
              "kModes lists every Mode, in order");

/// The mode every request gets when it names none.
inline constexpr Mode kDefaultMode = Mode::kBlisV2;

/// The name a request and a result use for `mode`.
inline const char* mode_name(Mode mode) { return kModes[static_cast<size_t>(mode)].name; }

/// The mode named `name`, or nothing for an unknown name.
inline std::optional<Mode> parse_mode(std::string_view name) {
  for (size_t i = 0; i < sizeof kModes / sizeof kModes[0]; ++i)
    if (name == kModes[i].name) return static_cast<Mode>(i);
  return std::nullopt;
}

/// "blis-v2, corrected, measured" for messages.
inline std::string mode_name_list() {
  std::string out;
  for (const ModeInfo& m : kModes) out += (out.empty() ? "" : ", ") + std::string(m.name);
  return out;
}

}  // namespace stepcalc
