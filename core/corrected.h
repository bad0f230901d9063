// The "corrected" mode: named switches over the reference model, each fixing one
// documented weakness (docs/CORRECTED-MODE.md). All off is exactly "blis-v2".
#pragma once

#include <string>
#include <vector>

#include "error.h"
#include "model.h"
#include "step_result.h"
#include "tables.h"

namespace stepcalc {

struct CorrectedSwitches {
  bool any() const { return false; }
};

/// The switches of a mode name ("blis-v2" or "corrected"); error for unknown names.
Expected<CorrectedSwitches> switches_for_mode(const std::string& mode);

/// The names of the modes, default first.
std::vector<std::string> mode_names();

/// CPU overhead of the step in microseconds.
double overhead_us(const CorrectedSwitches& sw, const Request& r);

double corrected_decode_attn_s(const CorrectedSwitches& sw, const Request& r, const DecodeTable& table,
                               const DecodeLookup& lookup, double batch, double flops, double peak_flops);
double corrected_prefill_attn_s(const CorrectedSwitches& sw, const Request& r, const PrefillTable& table,
                                double progress, double new_tokens, double flops, double peak_flops);
void apply_corrections(const CorrectedSwitches& sw, const Request& r, double tp_scaling, StepResult* out);

}  // namespace stepcalc
