// SPDX-License-Identifier: Apache-2.0
// catalogue_json() and resolve_model_json(): what they export is what the core does
// (each fact checked against the behaviour it describes, not against a copy of it).
#include <algorithm>
#include <string>
#include <vector>

#include "api/api.h"
#include "api/catalogue.h"
#include "base/input_limits.h"
#include "doctest.h"
#include "estimators/reference/corrected.h"
#include "io/request_json.h"
#include "json/json_writer.h"
#include "kernel_test_support.h"
#include "kernels/gpu_spec.h"
#include "kernels/kernel_registry.h"
#include "simdjson.h"

using namespace stepcalc;

namespace {

struct Parsed {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  explicit Parsed(const std::string& text) { REQUIRE(parser.parse(text).get(root) == simdjson::SUCCESS); }
};

using Element = simdjson::simdjson_result<simdjson::dom::element>;

/// The array `e` holds, by value (a range-for over value_unsafe() of a temporary dangles).
simdjson::dom::array array_of(Element e) {
  simdjson::dom::array a;
  REQUIRE(e.get_array().get(a) == simdjson::SUCCESS);
  return a;
}

std::vector<std::string> names(Element list, const char* key = "name") {
  std::vector<std::string> out;
  for (simdjson::dom::element item : array_of(list)) {
    std::string_view s;
    if (key == nullptr)
      REQUIRE(item.get_string().get(s) == simdjson::SUCCESS);
    else
      REQUIRE(item[key].get_string().get(s) == simdjson::SUCCESS);
    out.emplace_back(s);
  }
  return out;
}

const std::string kStep = R"("step":{"prefill_requests":[{"progress_index":0,"num_new_prefill_tokens":100}]})";

/// A registry holding every part of one kernel set, as the CLI and the page load it.
KernelRegistry registry_with(const std::string& gpu, const std::string& version) {
  KernelRegistry r;
  const KernelSet* set = find_kernel_set(gpu, version);
  REQUIRE_MESSAGE(set != nullptr, gpu << " " << version);
  for (const KernelPartInfo& p : set->parts) {
    const std::string bytes = test::read_kernel_pack(set->file_name(p.name));
    REQUIRE(r.add_pack(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()).ok());
  }
  return r;
}

}  // namespace

TEST_CASE("catalogue: modes are the modes the core prices, default first") {
  Parsed c(catalogue_json());
  const std::vector<std::string> modes = names(c.root["modes"]);
  CHECK(modes == mode_names());
  CHECK(std::string(c.root["default_mode"].get_string().value_unsafe()) == mode_name(Request().mode));
  const KernelRegistry kernels = registry_with("H100", "vllm-0.24.0");
  for (const std::string& mode : modes) {
    auto priced = price_json(R"({"model":"llama-2-7b-hf","mode":")" + mode + R"(",)" + kStep + "}", kernels);
    CHECK_MESSAGE(priced.ok(), mode);
  }
  CHECK(price_json(R"({"model":"llama-2-7b-hf","mode":"nope",)" + kStep + "}").error().code == "unknown_mode");
}

TEST_CASE("catalogue: switches and parameters are the ones a request may set, defaults as priced") {
  Parsed c(catalogue_json());
  for (const std::string& name : names(c.root["corrected"]["switches"])) {
    auto r = price_json(R"({"model":"llama-2-7b-hf","corrected":{"switches":{")" + name + R"(":true}},)" + kStep + "}");
    CHECK_MESSAGE(r.ok(), name);
  }
  auto corrected = price_json(R"({"model":"llama-2-7b-hf","mode":"corrected",)" + kStep + "}");
  REQUIRE(corrected.ok());
  Parsed result(corrected.value());
  size_t count = 0;
  for (simdjson::dom::element p : array_of(c.root["corrected"]["params"])) {
    const std::string name(p["name"].get_string().value_unsafe());
    const double def = p["default"].get_double().value_unsafe();
    CHECK_MESSAGE(result.root["corrected"]["params"][name].get_double().value_unsafe() == def, name);
    const double max = p["max"].get_double().value_unsafe();
    auto above = price_json(R"({"model":"llama-2-7b-hf","corrected":{"params":{")" + name + R"(":)" +
                            format_double(max * 2 + 1) + "}}," + kStep + "}");
    CHECK_MESSAGE(above.error().code == "out_of_range", name);
    ++count;
  }
  CHECK(count == kNumCorrectedParams);
  CHECK(result.root["corrected"]["switches"].get_object().value_unsafe().size() ==
        names(c.root["corrected"]["switches"]).size());
}

TEST_CASE("catalogue: sweep axes accept exactly [min, max]; the default decode KV is the one added") {
  Parsed c(catalogue_json());
  const std::string request = R"({"model":"llama-2-7b-hf","step":{}})";
  for (simdjson::dom::element a : array_of(c.root["sweep"]["axes"])) {
    const std::string axis(a["name"].get_string().value_unsafe());
    const double min = static_cast<double>(a["min"].get_int64().value_unsafe());
    const double max = static_cast<double>(a["max"].get_int64().value_unsafe());
    auto swept = sweep_json(request, axis, {min - 1, min, max + 1});
    REQUIRE_MESSAGE(swept.ok(), axis);
    Parsed points(swept.value());
    simdjson::dom::array list;
    REQUIRE(points.root.get_array().get(list) == simdjson::SUCCESS);
    CHECK_MESSAGE(list.at(0)["error"].is_object(), axis);
    CHECK_MESSAGE(!list.at(1)["error"].is_object(), axis);
    CHECK_MESSAGE(list.at(2)["error"].is_object(), axis);
  }
  CHECK(sweep_json(request, "width", {1}).error().code == "invalid_value");
  // decode_batch on a step without decodes prices decodes at the default KV.
  const int64_t kv = c.root["sweep"]["default_decode_kv"].get_int64().value_unsafe();
  auto swept = sweep_json(request, "decode_batch", {4});
  std::string with_kv = R"({"model":"llama-2-7b-hf","step":{"decode_requests":[)";
  for (int i = 0; i < 4; ++i) with_kv += std::string(i ? "," : "") + R"({"progress_index":)" + std::to_string(kv) + "}";
  with_kv += "]}}";
  auto priced = price_json(with_kv);
  REQUIRE(swept.ok());
  REQUIRE(priced.ok());
  Parsed a(swept.value()), b(priced.value());
  CHECK(a.root.at(0)["step_time_us"].get_int64().value_unsafe() == b.root["step_time_us"].get_int64().value_unsafe());
}

TEST_CASE("catalogue: request fields are the accepted fields; limits are the enforced ones") {
  Parsed c(catalogue_json());
  auto unknown = parse_request(R"({"model":"llama-2-7b-hf","nope":1,)" + kStep + "}");
  REQUIRE_FALSE(unknown.ok());
  std::string listed;
  for (const std::string& f : names(c.root["request_fields"], nullptr)) listed += (listed.empty() ? "" : ", ") + f;
  CHECK(unknown.error().message.find("known fields: " + listed + ".") != std::string::npos);

  simdjson::dom::element limits = c.root["limits"].value_unsafe();
  const int64_t max_tokens = limits["tokens"].get_int64().value_unsafe();
  const std::string over = std::to_string(max_tokens + 1);
  auto tokens =
      parse_request(R"({"model":"llama-2-7b-hf","step":{"decode_requests":[{"progress_index":)" + over + "}]}}");
  CHECK(tokens.error().code == "out_of_range");
  CHECK(limits["requests_per_step"].get_int64().value_unsafe() == limits::kMaxRequestsPerStep);
  CHECK(limits["tp"].get_int64().value_unsafe() == limits::kMaxTp);
  auto tp = parse_request(R"({"model":"llama-2-7b-hf","tp":)" +
                          std::to_string(limits["tp"].get_int64().value_unsafe() + 1) + "," + kStep + "}");
  CHECK(tp.error().code == "out_of_range");
}

TEST_CASE("catalogue: request choices are the accepted values; every GPU and kernel set listed prices") {
  Parsed c(catalogue_json());
  for (const char* field : {"quantization", "kv_cache_dtype"}) {
    const std::vector<std::string> values = names(c.root["request_choices"][field], nullptr);
    CHECK(values.size() >= 2);
    for (const std::string& v : values) {
      auto r =
          parse_request(R"({"model":"llama-2-7b-hf",")" + std::string(field) + R"(":")" + v + R"(",)" + kStep + "}");
      // Accepted, or named but refused as not priceable yet (the 4-bit quantizations), naming the field.
      const bool named_unsupported = !r.ok() && r.error().code == "unsupported" && r.error().path == field;
      CHECK_MESSAGE((r.ok() || named_unsupported), field << " " << v);
    }
    auto bad = parse_request(R"({"model":"llama-2-7b-hf",")" + std::string(field) + R"(":"int3",)" + kStep + "}");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().code == "invalid_value");
    CHECK(bad.error().path == field);
    for (const std::string& v : values) CHECK(bad.error().message.find("\"" + v + "\"") != std::string::npos);
  }
  // Each GPU with a spec names its kernel versions; each listed set resolves and prices.
  std::vector<std::string> gpus = names(c.root["gpu_specs"]);
  CHECK(gpus.size() >= 5);
  size_t sets = 0;
  for (simdjson::dom::element k : array_of(c.root["kernels"])) {
    const std::string gpu(k["gpu"].get_string().value_unsafe());
    const std::string version(k["version"].get_string().value_unsafe());
    CHECK_MESSAGE(std::find(gpus.begin(), gpus.end(), gpu) != gpus.end(), gpu);
    auto resolved = resolve_kernels(gpu, version);
    CHECK_MESSAGE(resolved.ok(), gpu << " " << version);
    ++sets;
  }
  // Every GPU with tables of its own has a set; one with constants only reads its sibling's.
  size_t own = 0;
  for (const GpuSpec& g : gpu_specs()) {
    if (g.kernels_from.empty()) {
      ++own;
    } else {
      CHECK(resolve_kernels(g.name, "")->first == g.kernels_from);
    }
  }
  CHECK(own < gpus.size());
  CHECK(sets >= own);
  const KernelRegistry b200 = registry_with("B200", "vllm-0.24.0");
  auto priced = price_json(
      R"({"model":"llama-2-7b-hf","mode":"measured","gpu":"B200","kernels":"vllm-0.24.0",)" + kStep + "}", b200);
  CHECK_MESSAGE(priced.ok(), (priced.ok() ? "" : priced.error().message));
}

TEST_CASE("catalogue: every config note can be raised by its keys") {
  Parsed c(catalogue_json());
  for (simdjson::dom::element note : array_of(c.root["model_config"]["notes"])) {
    const std::string code(note["code"].get_string().value_unsafe());
    std::string config = R"({"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":8,"torch_dtype":"bfloat16")";
    for (const std::string& key : names(note["keys"], nullptr)) config += ",\"" + key + "\":4";
    config += "}";
    auto resolved = resolve_model_json(config);
    REQUIRE_MESSAGE(resolved.ok(), code);
    CHECK_MESSAGE(resolved.value().find("\"code\":\"" + code + "\"") != std::string::npos, code, resolved.value());
  }
}

TEST_CASE("resolve_model_json: the model a request with it is priced with, without pricing") {
  for (const char* model : {R"("meta-llama/Llama-3.1-8B-Instruct")", R"("llama-2-70b-hf")",
                            R"({"num_hidden_layers":3,"hidden_size":96,"num_attention_heads":6,"head_dim":32,)"
                            R"("num_local_experts":8,"torch_dtype":"float16"})"}) {
    CAPTURE(model);
    auto resolved = resolve_model_json(model);
    REQUIRE(resolved.ok());
    auto priced = price_json(std::string(R"({"model":)") + model + "," + kStep + "}");
    REQUIRE(priced.ok());
    Parsed r(resolved.value()), p(priced.value());
    Parsed c(catalogue_json());
    std::vector<std::string> fields = names(c.root["model_config"]["shape_fields"], nullptr);
    fields.push_back("head_dim");
    for (const std::string& f : fields)
      CHECK_MESSAGE(r.root[f].get_double().value_unsafe() == p.root["model"][f].get_double().value_unsafe(), f);
    std::vector<std::string> warnings = names(p.root["warnings"], "code");
    for (const std::string& code : names(r.root["notes"], "code"))
      CHECK_MESSAGE(std::find(warnings.begin(), warnings.end(), code) != warnings.end(), code);
    CHECK(std::string(r.root["source"].get_string().value_unsafe()) ==
          std::string(p.root["model"]["source"].get_string().value_unsafe()));
  }
  auto preset = resolve_model_json(R"("meta-llama/Llama-3.1-8B-Instruct")");
  Parsed r(preset.value());
  CHECK(std::string(r.root["preset"].get_string().value_unsafe()) == "llama-3.1-8b-instruct");
  CHECK(resolve_model_json("{}").error().path == "model.num_hidden_layers");
  CHECK(resolve_model_json(R"("llama-9")").error().code == "unknown_preset");
  CHECK(resolve_model_json("[1]").error().code == "type_error");
  CHECK(resolve_model_json("{").error().path == "model");
}

namespace stepcalc {
namespace {

/// step_time_us of a result JSON.
double step_time_of(const std::string& json) {
  Parsed p(json);
  return p.root["step_time_us"].get_double().value_unsafe();
}

TEST_CASE("a config without torch_dtype is priced as vLLM's --dtype auto loads it: bfloat16, with a note") {
  const std::string bare =
      R"({"num_hidden_layers":2,"hidden_size":512,"num_attention_heads":8,"intermediate_size":1024,"vocab_size":1000)";
  auto resolved = resolve_model_json(bare + "}");
  REQUIRE_MESSAGE(resolved.ok(), (resolved.ok() ? "" : resolved.error().message));
  CHECK(resolved.value().find(R"("torch_dtype":"bfloat16")") != std::string::npos);
  CHECK(resolved.value().find(R"("bytes_per_param":2,)") != std::string::npos);
  CHECK(resolved.value().find(R"("code":"dtype_assumed")") != std::string::npos);
  const KernelRegistry h100 = registry_with("H100", "vllm-0.24.0");
  for (const char* mode : {"blis-v2", "corrected", "measured"}) {
    CAPTURE(mode);
    const std::string head = std::string(R"({"mode":")") + mode + R"(","model":)";
    auto assumed = price_json(head + bare + "}," + kStep + "}", h100);
    auto stated = price_json(head + bare + R"(,"torch_dtype":"bfloat16"},)" + kStep + "}", h100);
    REQUIRE_MESSAGE(assumed.ok(), (assumed.ok() ? "" : assumed.error().message));
    REQUIRE(stated.ok());
    CHECK(assumed.value().find(R"("code":"dtype_assumed")") != std::string::npos);
    CHECK(stated.value().find("dtype_assumed") == std::string::npos);
    CHECK(step_time_of(assumed.value()) == step_time_of(stated.value()));
  }
}

}  // namespace
}  // namespace stepcalc
