// SPDX-License-Identifier: Apache-2.0
// JSON in: HF config reading (text_config, fallbacks, dtypes, truncation), presets,
// and errors that name their JSON path.
#include <string>

#include "doctest.h"
#include "io/request_json.h"

using namespace stepcalc;

namespace {

ModelShape model(const std::string& json) {
  auto m = parse_model_config(json);
  REQUIRE_MESSAGE(m.ok(), m.error().path << ": " << m.error().message);
  return m.value();
}

Error request_error(const std::string& json) {
  auto r = parse_request(json);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

const char* kStep = R"("step":{"prefill_requests":[],"decode_requests":[]})";

}  // namespace

TEST_CASE("HF config: the basic fields and the dtype's bytes per parameter") {
  const ModelShape m = model(R"({"num_hidden_layers":32,"hidden_size":4096,"num_attention_heads":32,
      "num_key_value_heads":8,"intermediate_size":14336,"torch_dtype":"bfloat16","vocab_size":128256})");
  CHECK(m.num_layers == 32);
  CHECK(m.num_kv_heads == 8);
  CHECK(m.intermediate_size == 14336);
  CHECK(m.bytes_per_param == 2);
  CHECK(m.vocab_size == 128256);
}

TEST_CASE("HF config: KV heads fall back through num_kv_heads and multi_query_group_num to H") {
  const char* base = R"("num_hidden_layers":2,"hidden_size":64,"num_attention_heads":8,"torch_dtype":"float16")";
  CHECK(model(std::string("{") + base + R"(,"num_key_value_heads":0,"num_kv_heads":4})").num_kv_heads == 4);
  CHECK(model(std::string("{") + base + R"(,"multi_query_group_num":2})").num_kv_heads == 2);
  CHECK(model(std::string("{") + base + "}").num_kv_heads == 8);
  CHECK(model(std::string("{") + base + R"(,"num_key_value_heads":null})").num_kv_heads == 8);
}

TEST_CASE("HF config: FFN width falls back to ffn_hidden_size, then 4*d") {
  const char* base = R"("num_hidden_layers":2,"hidden_size":64,"num_attention_heads":8,"torch_dtype":"float16")";
  CHECK(model(std::string("{") + base + R"(,"ffn_hidden_size":100})").intermediate_size == 100);
  CHECK(model(std::string("{") + base + R"(,"intermediate_size":0})").intermediate_size == 256);
}

TEST_CASE("HF config: text_config keys are merged over the top level") {
  const ModelShape m = model(R"({"torch_dtype":"bfloat16","hidden_size":1,"text_config":{
      "num_hidden_layers":48,"hidden_size":5120,"num_attention_heads":40,"num_key_value_heads":8,
      "intermediate_size":8192}})");
  CHECK(m.num_layers == 48);
  CHECK(m.hidden_size == 5120);
  CHECK(m.bytes_per_param == 2);
}

TEST_CASE("HF config: integers are truncated toward zero; dtype falls back to `dtype`") {
  const ModelShape m = model(R"({"num_hidden_layers":32.9,"hidden_size":4096,"num_attention_heads":32,"dtype":"fp8"})");
  CHECK(m.num_layers == 32);
  CHECK(m.bytes_per_param == 1);
}

TEST_CASE("dtype names") {
  CHECK(bytes_per_param_of_dtype("float32") == 4);
  CHECK(bytes_per_param_of_dtype("float16") == 2);
  CHECK(bytes_per_param_of_dtype("bfloat16") == 2);
  for (const char* one : {"int8", "uint8", "fp8", "int4", "nf4"}) CHECK(bytes_per_param_of_dtype(one) == 1);
  CHECK(bytes_per_param_of_dtype("float8_e4m3fn") == 0);
}

TEST_CASE("HF config: unknown dtype and missing fields are errors naming the field") {
  auto e =
      parse_model_config(R"({"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":8,"torch_dtype":"weird"})");
  CHECK(e.error().path == "model.torch_dtype");
  e = parse_model_config(R"({"num_hidden_layers":2,"hidden_size":64,"torch_dtype":"float16"})");
  CHECK(e.error().path == "model.num_attention_heads");
  e = parse_model_config(
      R"({"num_hidden_layers":"2","hidden_size":64,"num_attention_heads":8,"torch_dtype":"float16"})");
  CHECK(e.error().code == "type_error");
  CHECK(e.error().path == "model.num_hidden_layers");
}

TEST_CASE("HF config: KV heads that cannot serve equal groups of query heads are refused, naming the key") {
  const char* base = R"("num_hidden_layers":2,"hidden_size":512,"num_attention_heads":8,"torch_dtype":"float16")";
  auto e = parse_model_config(std::string("{") + base + R"(,"num_key_value_heads":16})");
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().code == "invalid_value");
  CHECK(e.error().path == "model.num_key_value_heads");
  CHECK(e.error().message.find("must divide num_attention_heads (8)") != std::string::npos);
  e = parse_model_config(std::string("{") + base + R"(,"num_kv_heads":3})");
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().path == "model.num_kv_heads");
  e = parse_model_config(std::string(R"({"text_config":{"num_key_value_heads":5},)") + base + "}");
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().path == "model.text_config.num_key_value_heads");
  CHECK(model(std::string("{") + base + R"(,"num_key_value_heads":1})").num_kv_heads == 1);
  CHECK(model(std::string("{") + base + R"(,"num_key_value_heads":8})").num_kv_heads == 8);
}

TEST_CASE("HF config: linear-attention and state-space layers without tables are refused, naming the key") {
  const std::string base =
      R"("num_hidden_layers":4,"hidden_size":512,"num_attention_heads":8,"torch_dtype":"bfloat16")";
  const auto refused = [&](const std::string& extra, const char* path) {
    auto e = parse_model_config("{" + base + "," + extra + "}");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().code == "unsupported");
    CHECK(e.error().path == path);
    CHECK(e.error().message.find("linear-attention") != std::string::npos);
  };
  // Kimi-Linear's linear_attn_config is read and checked (tests/core/test_kda.cpp).
  refused(R"("attn_type_list":[0,0,1,0])", "model.attn_type_list");                    // MiniMax-Text-01
  refused(R"("layers_block_type":["mamba","attention"])", "model.layers_block_type");  // Nemotron-H
  refused(R"("layer_types":["mamba_linear","full_attention"])", "model.layer_types");  // not gated DeltaNet
  // Gated DeltaNet (Qwen3-Next, Qwen3.5) is read, its widths checked field by field.
  const std::string gdn = R"("linear_num_key_heads":16,"linear_num_value_heads":32,"linear_key_head_dim":128,)"
                          R"("linear_value_head_dim":128,"linear_conv_kernel_dim":4)";
  CHECK(model("{" + base + R"(,"full_attention_interval":4,)" + gdn + "}").spec.linear.num_layers == 3);
  CHECK(model("{" + base + R"(,"layer_types":["linear_attention","full_attention","linear_attention",)" +
              R"("full_attention"],)" + gdn + "}")
            .spec.linear.num_layers == 2);
  const auto bad = [&](const std::string& extra, const char* code, const char* path) {
    auto e = parse_model_config("{" + base + "," + extra + "}");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().code == code);
    CHECK(e.error().path == path);
  };
  bad(R"("full_attention_interval":4,"linear_num_value_heads":32)", "missing_field", "model.linear_num_key_heads");
  bad(R"("text_config":{"full_attention_interval":4})", "missing_field", "model.linear_num_key_heads");
  bad(R"("layer_types":["linear_attention","full_attention"])", "missing_field", "model.linear_num_key_heads");
  bad(gdn, "missing_field", "model.full_attention_interval");
  bad(R"("full_attention_interval":0,)" + gdn, "invalid_value", "model.full_attention_interval");
  bad(R"("full_attention_interval":4,"linear_num_key_heads":"16","linear_num_value_heads":32,)"
      R"("linear_key_head_dim":128,"linear_value_head_dim":128,"linear_conv_kernel_dim":4)",
      "type_error", "model.linear_num_key_heads");
  bad(R"("full_attention_interval":4,"linear_num_key_heads":12,"linear_num_value_heads":32,)"
      R"("linear_key_head_dim":128,"linear_value_head_dim":128,"linear_conv_kernel_dim":4)",
      "unsupported", "model.linear_num_value_heads");
  bad(R"("full_attention_interval":4,"linear_num_key_heads":16,"linear_num_value_heads":32,)"
      R"("linear_key_head_dim":-1,"linear_value_head_dim":128,"linear_conv_kernel_dim":4)",
      "invalid_value", "model.linear_key_head_dim");
  bad(R"("layer_types":["linear_attention","linear_attention","linear_attention","linear_attention"],)" + gdn,
      "unsupported", "model.layer_types");
  // All softmax: MiniMax-M2.5 lists 1 for every layer; sliding windows are softmax attention too.
  CHECK(model("{" + base + R"(,"attn_type_list":[1,1,1,1]})").num_layers == 4);
  CHECK(
      model("{" + base + R"(,"sliding_window":128,"layer_types":["sliding_attention","full_attention"]})").num_layers ==
      4);
}

TEST_CASE("bytes_per_param given explicitly wins over the dtype") {
  CHECK(model(R"({"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":8,"torch_dtype":"float32",
                  "bytes_per_param":1})")
            .bytes_per_param == 1);
}

TEST_CASE("every preset parses; names match case-insensitively and after an org prefix") {
  CHECK(model_preset_names().size() == 29);  // presets/models/ (presets/README.md lists them)
  for (const std::string& name : model_preset_names()) {
    CAPTURE(name);
    auto m = model_preset(name);
    REQUIRE(m.ok());
    CHECK(m->num_layers > 0);
    CHECK(m->bytes_per_param > 0);
  }
  auto m = model_preset("meta-llama/Llama-3.1-8B-Instruct");
  REQUIRE(m.ok());
  CHECK(m->hidden_size == 4096);
  CHECK(model_preset("llama-9").error().code == "unknown_preset");
  auto scout = model_preset("llama-4-scout-17b-16e-instruct-fp8-dynamic");  // text_config
  REQUIRE(scout.ok());
  CHECK(scout->num_layers == 48);
  CHECK_FALSE(scout->notes.empty());  // MoE is said to be ignored
}

TEST_CASE("request: defaults, hardware overrides and the echoed id") {
  auto r = parse_request(std::string(R"({"id":"a1","model":"llama-2-7b-hf","hardware":{"perLayerOverhead":50},)") +
                         kStep + "}");
  REQUIRE(r.ok());
  CHECK(r->id == "a1");
  CHECK(r->tp == 1);
  CHECK(r->hardware.tflops_peak == 989.5);
  CHECK(r->hardware.per_layer_overhead_us == 50);
  CHECK(r->mode == Mode::kBlisV2);
}

TEST_CASE("request: the mode is parsed once, after the other fields") {
  auto named = [](const std::string& mode) {
    return parse_request(R"({"model":"llama-2-7b-hf","mode":")" + mode + R"(",)" + kStep + "}");
  };
  CHECK(named("corrected")->mode == Mode::kCorrected);
  CHECK(named("measured")->mode == Mode::kMeasured);
  CHECK(std::string(mode_name(named("blis-v2")->mode)) == "blis-v2");
  auto unknown = named("nonsense");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().code == "unknown_mode");
  CHECK(unknown.error().path == "mode");
  CHECK(unknown.error().message == "Unknown mode 'nonsense'; known modes: blis-v2, corrected, measured.");
  // Another error in the same request comes first.
  auto both = parse_request(R"({"model":"no-such-model","mode":"nonsense",)" + std::string(kStep) + "}");
  REQUIRE_FALSE(both.ok());
  CHECK(both.error().code != "unknown_mode");
  for (size_t i = 0; i < sizeof kModes / sizeof kModes[0]; ++i)
    CHECK(parse_mode(kModes[i].name) == static_cast<Mode>(i));
}

TEST_CASE("request errors name the JSON path") {
  CHECK(request_error(R"({"model":"llama-2-7b-hf","step":{"decode_requests":[{"progress_index":1},
      {"progress_index":2},{"progress_index":3},{"progress_index":-4}]}})")
            .path == "step.decode_requests[3].progress_index");
  CHECK(request_error(R"({"model":"llama-2-7b-hf","step":{"prefill_requests":[{"progress_index":0,
      "num_new_prefill_tokens":1.5}]}})")
            .code == "not_integer");
  CHECK(request_error(std::string(R"({"model":"llama-2-7b-hf","tp":0,)") + kStep + "}").path == "tp");
  CHECK(request_error(std::string(R"({"model":"llama-2-7b-hf","tpp":2,)") + kStep + "}").code == "unknown_field");
  CHECK(request_error(std::string(R"({"model":"llama-2-7b-hf","hardware":{"TFlopPeak":1},)") + kStep + "}").path ==
        "hardware.TFlopPeak");
  CHECK(request_error(R"({"model":"llama-2-7b-hf"})").path == "step");
  CHECK(request_error(R"({"model":"llama-2-7b-hf","step":{"prefill_requests":[{"progress_index":0}]}})").path ==
        "step.prefill_requests[0].num_new_prefill_tokens");
  CHECK(request_error(std::string(R"({"model":"llama-2-7b-hf","gpu":"H800",)") + kStep + "}").code == "unknown_gpu");
  CHECK(request_error(std::string(R"({"model":"llama-2-7b-hf","gpu":"H100","kernels":"vllm-0.15.1",)") + kStep + "}")
            .code == "unknown_kernels");
  CHECK(request_error(R"({"model":)").code == "parse_error");
  CHECK(request_error("[1,2]").code == "type_error");
  CHECK(request_error(std::string(R"({"model":42,)") + kStep + "}").path == "model");
}

TEST_CASE("a batch reports each bad element at its own index") {
  auto batch =
      parse_requests(std::string(R"([{"model":"llama-2-7b-hf",)") + kStep + R"(},{"model":"nope",)" + kStep + "}]");
  REQUIRE(batch.ok());
  REQUIRE(batch->requests.size() == 2);
  CHECK(batch->requests[0].ok());
  CHECK(batch->requests[1].error().path == "[1].model");
}
