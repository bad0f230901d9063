// SPDX-License-Identifier: Apache-2.0
// The GPU presets compiled in from presets/gpus/ (AIConfigurator's systems files).
#include <cctype>
#include <string>
#include <vector>

#include "doctest.h"
#include "kernels/gpu_spec.h"
#include "simdjson.h"
#include "test_support.h"

using namespace stepcalc;

namespace {

/// presets/gpus/<name in lower case>.json, parsed.
simdjson::dom::element preset_file(simdjson::dom::parser& parser, std::string* text, const std::string& name) {
  std::string file;
  for (char c : name) file += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  *text = test::read_file("presets/gpus/" + file + ".json");
  simdjson::dom::element root;
  REQUIRE(parser.parse(*text).get(root) == simdjson::SUCCESS);
  return root;
}

}  // namespace

TEST_CASE("gpu specs: every preset file's figures, field for field, found case-insensitively") {
  REQUIRE_FALSE(gpu_specs().empty());
  std::string names;
  for (const GpuSpec& g : gpu_specs()) {
    CAPTURE(g.name);
    simdjson::dom::parser parser;
    std::string text;
    const simdjson::dom::element f = preset_file(parser, &text, g.name);
    const auto number = [&](const char* key) {
      double v = 0;
      if (f[key].get_double().get(v) != simdjson::SUCCESS) v = 0;  // absent: 0, as the generator writes it
      return v;
    };
    const auto str = [&](const char* key) { return std::string(f[key].get_string().value_unsafe()); };
    CHECK(g.name == str("name"));
    CHECK(g.device == str("device"));
    CHECK(g.interconnect == str("interconnect"));
    CHECK(g.default_kernels == str("default_kernels"));
    CHECK(g.memory_bytes == number("memory_bytes"));
    CHECK(g.hbm_bw_bytes_per_s == number("hbm_bw_bytes_per_s"));
    CHECK(g.bf16_tflops == number("bf16_tflops"));
    CHECK(g.fp8_tflops == number("fp8_tflops"));
    CHECK(g.int8_tflops == number("int8_tflops"));
    CHECK(g.nvlink_bw_bytes_per_s == number("nvlink_bw_bytes_per_s"));
    CHECK(g.pcie_bw_bytes_per_s == number("pcie_bw_bytes_per_s"));
    CHECK(g.mem_bw_empirical_scaling == number("mem_bw_empirical_scaling"));
    CHECK(g.mem_empirical_latency_s == number("mem_empirical_latency_s"));
    CHECK(g.p2p_latency_s == number("p2p_latency_s"));
    CHECK(g.other_mem_bytes == number("other_mem_bytes"));
    std::vector<double> nccl;
    simdjson::dom::array nccl_list, kernel_list;
    REQUIRE(f["nccl_mem_bytes"].get_array().get(nccl_list) == simdjson::SUCCESS);
    REQUIRE(f["kernels"].get_array().get(kernel_list) == simdjson::SUCCESS);
    for (simdjson::dom::element v : nccl_list) nccl.push_back(v.get_double().value_unsafe());
    CHECK(g.nccl_mem_bytes == nccl);
    std::vector<std::string> versions;
    for (simdjson::dom::element v : kernel_list) versions.emplace_back(v.get_string().value_unsafe());
    CHECK(g.kernel_versions == versions);
    // Found by name in any case.
    std::string lower;
    for (char c : g.name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    CHECK(find_gpu_spec(lower) == &g);
    CHECK(find_gpu_spec(g.name) == &g);
    names += (names.empty() ? "" : ", ") + g.name;
  }
  CHECK(find_gpu_spec("H800") == nullptr);
  CHECK(find_gpu_spec("") == nullptr);
  CHECK(gpu_spec_names() == names);
}

TEST_CASE("gpu specs: NCCL reserve by TP, rounding TP up to the next measured figure") {
  const GpuSpec& g = *find_gpu_spec("H100");
  CHECK(g.nccl_mem_at_tp(1) == 0);
  CHECK(g.nccl_mem_at_tp(2) == 358612992.0);
  CHECK(g.nccl_mem_at_tp(3) == 411041792.0);
  CHECK(g.nccl_mem_at_tp(8) == 411041792.0);
  CHECK(g.nccl_mem_at_tp(16) == 411041792.0);
}
