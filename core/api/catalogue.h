// SPDX-License-Identifier: Apache-2.0
// The facts the core owns, exported once for the CLI, the page, the tools and the
// d.ts check: modes, the corrected switches and parameters, sweep axes, request
// fields, model-config fields and notes, dtypes, GPUs and every input limit. Nothing
// outside core/ retypes them.
#pragma once

#include <string>

namespace stepcalc {

/// The catalogue as JSON (docs/CATALOGUE.md):
/// {version, modes, default_mode, corrected: {switches, params}, sweep: {axes,
/// default_decode_kv}, request_fields, request_choices, request_defaults, model_config:
/// {shape_fields, notes}, dtypes, gpus (MFU tables), gpu_specs, kernels (measured kernel
/// sets per GPU and version), limits}.
std::string catalogue_json();

}  // namespace stepcalc
