// SPDX-License-Identifier: Apache-2.0
// KernelRegistry: packs by GPU and version, default versions, and the errors for an
// unknown GPU or version, a pack that was never loaded and a corrupt one.
#include <string>

#include "api/api.h"
#include "doctest.h"
#include "io/request_json.h"
#include "kernel_test_support.h"
#include "kernels/kernel_pack.h"
#include "kernels/kernel_registry.h"

using namespace stepcalc;

namespace {

Expected<LoadedPack> add(KernelRegistry& r, const std::string& file) {
  const std::string bytes = test::read_kernel_pack(file);
  return r.add_pack(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

TEST_CASE("registry: names resolve case-insensitively, to the default version when none is given") {
  auto h100 = resolve_kernels("h100", "");
  REQUIRE(h100.ok());
  CHECK(h100->first == "H100");
  CHECK(h100->second == "vllm-0.24.0");  // chosen by the accuracy ledger (docs/KERNELS.md)
  CHECK(resolve_kernels("H200", "vllm-0.14.0")->second == "vllm-0.14.0");
  CHECK(resolve_kernels("B200", "")->second == "vllm-0.24.0");
  CHECK(resolve_kernels("L40S", "")->second == "vllm-0.24.0");
  CHECK(resolve_kernels("H200", "vllm-0.24.0")->second == "vllm-0.24.0");
  auto bad_gpu = resolve_kernels("H800", "");
  REQUIRE_FALSE(bad_gpu.ok());
  CHECK(bad_gpu.error().code == "unknown_gpu");
  CHECK(bad_gpu.error().path == "gpu");
  CHECK(bad_gpu.error().message.find("A100, A100-PCIe, A30, B200, B300, B60, GB200, GB300, H100, H100-PCIe, H200, L4, "
                                     "L40S, RTX-PRO-6000") != std::string::npos);
  // AIConfigurator's system names are aliases.
  CHECK(resolve_kernels("b300_sxm", "")->first == "B300");
  CHECK(resolve_kernels("rtx_pro_6000_server", "")->first == "RTX-PRO-6000");
  CHECK(resolve_kernels("rtx-pro-6000", "")->second == "vllm-0.24.0");
  CHECK(resolve_kernels("B60", "")->second == "vllm-0.20.0");
  auto bad_version = resolve_kernels("A100", "vllm-0.24.0");
  REQUIRE_FALSE(bad_version.ok());
  CHECK(bad_version.error().code == "unknown_kernels");
  CHECK(bad_version.error().path == "kernels");
  CHECK(bad_version.error().message.find("vllm-0.14.0") != std::string::npos);
}

TEST_CASE("registry: packs join per GPU and version; what is not loaded is an error naming the GPU") {
  KernelRegistry r;
  CHECK(r.empty());
  auto none = r.get("H100");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().code == "kernels_not_loaded");
  CHECK(none.error().message.find("H100 vllm-0.24.0") != std::string::npos);
  auto loaded = add(r, "h100-vllm-0.24.0-gemm-bf16.bin");
  REQUIRE(loaded.ok());
  CHECK(loaded->gpu == "H100");
  CHECK(loaded->part == "gemm-bf16");
  REQUIRE(add(r, "h100-vllm-0.24.0-attention-bf16.bin").ok());
  REQUIRE(add(r, "h100-vllm-0.14.0-allreduce.bin").ok());
  auto db = r.get("h100");
  REQUIRE(db.ok());
  CHECK(db.value()->version() == "vllm-0.24.0");
  CHECK(db.value()->has(KernelTable::kGemm, KernelDtype::kBf16));
  CHECK(db.value()->has(KernelTable::kDecodeAttention, KernelDtype::kBf16));
  CHECK_FALSE(db.value()->has(KernelTable::kAllreduce, KernelDtype::kBf16));
  CHECK(r.loaded_parts("H100", "vllm-0.24.0") == std::vector<std::string>{"attention-bf16", "gemm-bf16"});
  CHECK(r.get("H100", "vllm-0.14.0").value()->parts() == std::vector<std::string>{"allreduce"});
  auto other = r.get("B200", "", "request.gpu");
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().path == "request.gpu");
  CHECK(other.error().message.find("B200 vllm-0.24.0") != std::string::npos);
}

TEST_CASE("registry: a corrupt pack is refused and spoils nothing already loaded") {
  KernelRegistry r;
  REQUIRE(add(r, "a100-vllm-0.14.0-gemm-bf16.bin").ok());
  std::string bytes = test::read_kernel_pack("a100-vllm-0.14.0-attention-bf16.bin");
  bytes.resize(bytes.size() / 2);
  auto bad = r.add_pack(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == "corrupt_kernels");
  CHECK(bad.error().message.find("A100 vllm-0.14.0") != std::string::npos);
  auto db = r.get("A100");
  REQUIRE(db.ok());
  CHECK(db.value()->parts() == std::vector<std::string>{"gemm-bf16"});
  const uint8_t junk[] = {1, 2, 3};
  CHECK_FALSE(r.add_pack(junk, sizeof junk).ok());
  CHECK(no_kernels().empty());
}

TEST_CASE("registry: deferred packs decode on first use; a corrupt one is get()'s error") {
  KernelRegistry r;
  const std::string gemm = test::read_kernel_pack("l40s-vllm-0.24.0-gemm-bf16.bin");
  auto added = r.add_pack_deferred(reinterpret_cast<const uint8_t*>(gemm.data()), gemm.size());
  REQUIRE(added.ok());
  CHECK(added->gpu == "L40S");
  CHECK(r.loaded_parts("L40S", "vllm-0.24.0") == std::vector<std::string>{"gemm-bf16"});
  auto db = r.get("L40S");
  REQUIRE(db.ok());
  CHECK(db.value()->gemm(KernelDtype::kBf16, 64, 4096, 4096).how == LookupHow::kExact);
  // A damaged file is refused when added (its checksum), naming the GPU; what was
  // loaded before stays usable.
  std::string damaged = test::read_kernel_pack("l40s-vllm-0.24.0-attention-bf16.bin");
  damaged.resize(damaged.size() - 10);
  auto refused = r.add_pack_deferred(reinterpret_cast<const uint8_t*>(damaged.data()), damaged.size());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == "corrupt_kernels");
  CHECK(refused.error().message.find("L40S vllm-0.24.0") != std::string::npos);
  REQUIRE(r.get("L40S").ok());
  // A pack whose tables are broken but whose checksum matches (written so): deferred,
  // then get()'s error.
  std::string broken = test::read_kernel_pack("l40s-vllm-0.24.0-attention-bf16.bin");
  broken.resize(broken.size() - 14);
  const uint32_t crc = pack_crc32(reinterpret_cast<const uint8_t*>(broken.data()), broken.size());
  for (int b = 0; b < 4; ++b) broken.push_back(static_cast<char>((crc >> (8 * b)) & 0xff));
  REQUIRE(r.add_pack_deferred(reinterpret_cast<const uint8_t*>(broken.data()), broken.size()).ok());
  auto bad = r.get("L40S", "", "requests[2].gpu");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == "corrupt_kernels");
  CHECK(bad.error().path == "requests[2].gpu");
  CHECK(bad.error().message.find("L40S vllm-0.24.0") != std::string::npos);
  const uint8_t junk[] = {'S', 'C', 'K', '2', 4, 'H', '9', '9', '9', 0, 0};
  CHECK_FALSE(r.add_pack_deferred(junk, sizeof junk).ok());
}

TEST_CASE("requests name each GPU and kernel version; blis-v2 prices them with H100 tables and a warning") {
  const std::string step = R"("step":{"decode_requests":[{"progress_index":1000}]})";
  for (const char* gpu : {"H100", "H200", "B200", "A100", "L40S"}) {
    const GpuSpec& spec = *find_gpu_spec(gpu);
    auto out = price_json(std::string(R"({"model":"llama-3.1-8b-instruct","gpu":")") + gpu + R"(",)" + step + "}");
    REQUIRE_MESSAGE(out.ok(), gpu);
    CHECK(out->find(std::string(R"("gpu":")") + gpu + "\"") != std::string::npos);
    const bool warned = out->find("\"gpu_h100_tables\"") != std::string::npos;
    CHECK(warned == (std::string(gpu) != "H100"));
    if (std::string(gpu) != "H100") {
      auto r = parse_request(std::string(R"({"model":"llama-3.1-8b-instruct","gpu":")") + gpu + R"(",)" + step + "}");
      REQUIRE(r.ok());
      CHECK(r->hardware.tflops_peak == spec.bf16_tflops);
      CHECK(r->hardware.bw_peak_tbs == spec.hbm_bw_bytes_per_s / 1e12);
    }
  }
  auto versioned = parse_request(
      std::string(R"({"model":"llama-3.1-8b-instruct","gpu":"h200","kernels":"vllm-0.24.0",)") + step + "}");
  REQUIRE(versioned.ok());
  CHECK(versioned->hardware.gpu == "H200");
  CHECK(versioned->kernels == "vllm-0.24.0");
  auto bad = parse_request(std::string(R"({"model":"llama-3.1-8b-instruct","gpu":"B200","kernels":"vllm-0.14.0",)") +
                           step + "}");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == "unknown_kernels");
  CHECK(bad.error().message.find("vllm-0.24.0") != std::string::npos);
}
