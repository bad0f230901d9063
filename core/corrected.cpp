#include "corrected.h"

namespace stepcalc {

Expected<CorrectedSwitches> switches_for_mode(const std::string& mode) {
  if (mode == "blis-v2") return CorrectedSwitches{};
  return make_error("unknown_mode", "mode", "Unknown mode '" + mode + "'; known modes: blis-v2.");
}

std::vector<std::string> mode_names() { return {"blis-v2"}; }

double overhead_us(const CorrectedSwitches&, const Request& r) {
  return r.hardware.per_layer_overhead_us * static_cast<double>(r.model.num_layers) / static_cast<double>(r.tp);
}

double corrected_decode_attn_s(const CorrectedSwitches&, const Request&, const DecodeTable&, const DecodeLookup&,
                               double, double, double) {
  return 0;
}
double corrected_prefill_attn_s(const CorrectedSwitches&, const Request&, const PrefillTable&, double, double,
                                double, double) {
  return 0;
}
void apply_corrections(const CorrectedSwitches&, const Request&, double, StepResult*) {}

}  // namespace stepcalc
