// JSON of the GPU presets and the kernel packs built (kernels/kernel_catalogue.h).
#include "io/kernel_catalogue_json.h"

#include "kernels/gpu_spec.h"
#include "kernels/kernel_catalogue.h"

namespace stepcalc {

namespace {

const char* dtype_name(KernelDtype d) { return d == KernelDtype::kFp8 ? "fp8" : "bf16"; }

void write_dtypes(JsonWriter& w, const char* name, const std::vector<KernelDtype>& list) {
  w.key(name).begin_array();
  for (KernelDtype d : list) w.value(dtype_name(d));
  w.end_array();
}

void write_ints(JsonWriter& w, const char* name, const std::vector<int>& list) {
  w.key(name).begin_array();
  for (int v : list) w.value(v);
  w.end_array();
}

}  // namespace

void write_gpu_specs(JsonWriter& w) {
  w.begin_array();
  for (const GpuSpec& g : gpu_specs()) {
    w.begin_object()
        .field("name", g.name)
        .field("device", g.device)
        .field("memory_bytes", g.memory_bytes)
        .field("hbm_bw_bytes_per_s", g.hbm_bw_bytes_per_s)
        .field("bf16_tflops", g.bf16_tflops)
        .field("fp8_tflops", g.fp8_tflops)
        .field("int8_tflops", g.int8_tflops)
        .field("interconnect", g.interconnect)
        .field("nvlink_bw_bytes_per_s", g.nvlink_bw_bytes_per_s)
        .field("pcie_bw_bytes_per_s", g.pcie_bw_bytes_per_s)
        .field("other_mem_bytes", g.other_mem_bytes);
    w.key("nccl_mem_bytes").begin_array();
    for (double v : g.nccl_mem_bytes) w.value(v);
    w.end_array().key("kernels").begin_array();
    for (const std::string& v : g.kernel_versions) w.value(v);
    w.end_array().field("default_kernels", g.default_kernels).field("source", g.source).end_object();
  }
  w.end_array();
}

void write_kernel_sets(JsonWriter& w) {
  w.begin_array();
  for (const KernelSet& s : kernel_sets()) {
    const GpuSpec* g = find_gpu_spec(s.gpu);
    w.begin_object()
        .field("gpu", s.gpu)
        .field("version", s.version)
        .field("default", g != nullptr && g->default_kernels == s.version);
    w.key("parts").begin_array();
    for (const KernelPartInfo& p : s.parts) {
      w.begin_object()
          .field("name", p.name)
          .field("file", s.file_name(p.name))
          .field("bytes", static_cast<int64_t>(p.bytes))
          .field("gzip_bytes", static_cast<int64_t>(p.gzip_bytes))
          .end_object();
    }
    const KernelCoverage& c = s.coverage;
    w.end_array().key("coverage").begin_object();
    write_dtypes(w, "gemm_dtypes", c.gemm_dtypes);
    write_dtypes(w, "kv_dtypes", c.kv_dtypes);
    write_ints(w, "attention_head_dims", c.attention_head_dims);
    write_ints(w, "allreduce_tps", c.allreduce_tps);
    write_dtypes(w, "moe_dtypes", c.moe_dtypes);
    w.key("moe_shapes").begin_array();
    for (const KernelCoverage::MoeShape& m : c.moe_shapes) {
      w.begin_object()
          .field("hidden", m.hidden)
          .field("intermediate", m.intermediate)
          .field("experts", m.experts)
          .field("topk", m.topk)
          .end_object();
    }
    w.end_array().field("mla", c.has_mla).end_object().end_object();
  }
  w.end_array();
}

std::string loaded_pack_json(const LoadedPack& p) {
  JsonWriter w;
  w.begin_object().field("gpu", p.gpu).field("version", p.version).field("part", p.part).end_object();
  return w.take();
}

}  // namespace stepcalc
