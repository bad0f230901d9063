// SPDX-License-Identifier: Apache-2.0
// The GPU presets compiled in from presets/gpus/ (AIConfigurator's systems files).
#include <string>

#include "doctest.h"
#include "kernels/gpu_spec.h"
#include "test_support.h"

using namespace stepcalc;

TEST_CASE("gpu specs: the five GPUs, found case-insensitively, with the yaml's figures") {
  REQUIRE(gpu_specs().size() == 5);
  for (const char* name : {"H100", "H200", "B200", "A100", "L40S"}) {
    const GpuSpec* g = find_gpu_spec(name);
    REQUIRE_MESSAGE(g != nullptr, name);
    CHECK(g->name == name);
    CHECK(g->memory_bytes > 40e9);
    CHECK(g->hbm_bw_bytes_per_s > 8e11);
    CHECK(g->bf16_tflops > 300);
    CHECK(g->nccl_mem_bytes.size() == 4);
    CHECK(!g->kernel_versions.empty());
    CHECK(g->source.find("AIConfigurator") != std::string::npos);
  }
  CHECK(find_gpu_spec("h100") == find_gpu_spec("H100"));
  CHECK(find_gpu_spec("H800") == nullptr);
  CHECK(find_gpu_spec("") == nullptr);
  CHECK(gpu_spec_names() == "A100, B200, H100, H200, L40S");
}

TEST_CASE("gpu specs: the figures are the preset files' numbers") {
  // The preset JSON is the source of truth; spot-check that the compiled-in copy matches it.
  const std::string h100 = test::read_file("presets/gpus/h100.json");
  CHECK(h100.find("\"memory_bytes\": 85899345920") != std::string::npos);
  const GpuSpec& g = *find_gpu_spec("H100");
  CHECK(g.memory_bytes == 85899345920.0);
  CHECK(g.hbm_bw_bytes_per_s == 3.35e12);
  CHECK(g.bf16_tflops == 989);
  CHECK(g.fp8_tflops == 1978);
  CHECK(g.nvlink_bw_bytes_per_s == 450e9);
  CHECK(g.other_mem_bytes == 3758096384.0);
  CHECK(g.default_kernels == "vllm-0.14.0");
  CHECK(g.interconnect == "NVLink");
  CHECK(find_gpu_spec("A100")->fp8_tflops == 0);  // no FP8 tensor cores
  CHECK(find_gpu_spec("L40S")->interconnect == "PCIe");
  CHECK(find_gpu_spec("B200")->default_kernels == "vllm-0.24.0");
}

TEST_CASE("gpu specs: NCCL reserve by TP, rounding TP up to the next measured figure") {
  const GpuSpec& g = *find_gpu_spec("H100");
  CHECK(g.nccl_mem_at_tp(1) == 0);
  CHECK(g.nccl_mem_at_tp(2) == 358612992.0);
  CHECK(g.nccl_mem_at_tp(3) == 411041792.0);
  CHECK(g.nccl_mem_at_tp(8) == 411041792.0);
  CHECK(g.nccl_mem_at_tp(16) == 411041792.0);
}
