// SPDX-License-Identifier: Apache-2.0
#include "io/workload_json.h"

#include <string>

#include "input_limits.h"

namespace stepcalc {
namespace {

constexpr const char* kWorkloadFields =
    "input_tokens, output_tokens, concurrency, request_rate, num_requests, prefix_cache_hit_ratio, seed, "
    "api_overhead_ms";
constexpr const char* kLengthFields = "distribution, mean, stddev, min, max";
constexpr const char* kEngineFields =
    "max_num_batched_tokens, max_num_seqs, gpu_memory_utilization, block_size, enable_chunked_prefill";

Expected<int64_t> tokens(json::element e, const json::Path& path, int64_t min) {
  return json::read_int(e, path, min, limits::kMaxServeTokensPerRequest, false);
}

/// A whole number of tokens, or {"distribution": ..., "mean", "stddev", "min", "max"}.
Expected<LengthDistribution> length_from_json(json::element e, const json::Path& path) {
  using Kind = LengthDistribution::Kind;
  LengthDistribution d;
  if (!e.is_object()) {
    auto n = tokens(e, path, 1);
    if (!n) return n.error();
    d.mean = d.min = d.max = n.value();
    return d;
  }
  bool have_kind = false, have_mean = false;
  json::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return json::type_error(path, e, "a number or an object");
  for (auto field : o) {
    const json::Path where = path.key(field.key);
    if (field.key == "distribution") {
      auto name = json::read_string(field.value, where);
      if (!name) return name.error();
      const std::string& n = name.value();
      if (n == "fixed")
        d.kind = Kind::kFixed;
      else if (n == "uniform")
        d.kind = Kind::kUniform;
      else if (n == "normal")
        d.kind = Kind::kNormal;
      else if (n == "exponential")
        d.kind = Kind::kExponential;
      else
        return make_error("invalid_value", where.str(),
                          where.str() + " must be one of fixed, uniform, normal, exponential.");
      have_kind = true;
    } else if (field.key == "stddev") {
      auto v = json::read_number_in(field.value, where, 0, static_cast<double>(limits::kMaxServeTokensPerRequest));
      if (!v) return v.error();
      d.stddev = v.value();
    } else if (field.key == "mean" || field.key == "min" || field.key == "max") {
      auto v = tokens(field.value, where, 1);
      if (!v) return v.error();
      (field.key == "mean" ? d.mean : field.key == "min" ? d.min : d.max) = v.value();
      have_mean = have_mean || field.key == "mean";
    } else {
      return json::unknown_field(path, field.key, kLengthFields);
    }
  }
  if (!have_kind) return json::missing_field(path, "distribution");
  if (d.kind == Kind::kUniform) {
    if (d.max == 0) return json::missing_field(path, "max", path.str() + ": a uniform distribution needs min and max.");
    if (d.max < d.min)
      return make_error("invalid_value", path.key("max").str(), path.str() + ".max must be at least its min.");
    d.mean = (d.min + d.max) / 2;
  } else if (!have_mean) {
    return json::missing_field(path, "mean");
  }
  if (d.max > 0 && d.max < d.min)
    return make_error("invalid_value", path.key("max").str(), path.str() + ".max must be at least its min.");
  return d;
}

}  // namespace

Expected<Workload> workload_from_json(json::element e, const json::Path& path) {
  json::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return json::type_error(path, e, "an object");
  Workload w;
  bool have_input = false, have_output = false;
  for (auto field : o) {
    const json::Path where = path.key(field.key);
    if (field.key == "input_tokens" || field.key == "output_tokens") {
      auto l = length_from_json(field.value, where);
      if (!l) return l.error();
      (field.key == "input_tokens" ? w.input_tokens : w.output_tokens) = l.value();
      (field.key == "input_tokens" ? have_input : have_output) = true;
    } else if (field.key == "concurrency") {
      auto v = json::read_int(field.value, where, 1, limits::kMaxServeConcurrency, false);
      if (!v) return v.error();
      w.concurrency = v.value();
    } else if (field.key == "request_rate") {
      auto v = json::read_number_in(field.value, where, 1e-9, limits::kMaxServeRequestRate);
      if (!v) return v.error();
      w.request_rate_per_s = v.value();
    } else if (field.key == "num_requests") {
      auto v = json::read_int(field.value, where, 1, limits::kMaxServeRequests, false);
      if (!v) return v.error();
      w.num_requests = v.value();
    } else if (field.key == "prefix_cache_hit_ratio") {
      auto v = json::read_number_in(field.value, where, 0, 1);
      if (!v) return v.error();
      w.prefix_cache_hit_ratio = v.value();
    } else if (field.key == "seed") {
      auto v = json::read_int(field.value, where, 0, int64_t{1} << 53, false);
      if (!v) return v.error();
      w.seed = static_cast<uint64_t>(v.value());
    } else if (field.key == "api_overhead_ms") {
      auto v = json::read_number_in(field.value, where, 0, limits::kMaxApiOverheadMs);
      if (!v) return v.error();
      w.api_overhead_us = v.value() * 1e3;
    } else {
      return json::unknown_field(path, field.key, kWorkloadFields);
    }
  }
  if (!have_input) return json::missing_field(path, "input_tokens");
  if (!have_output) return json::missing_field(path, "output_tokens");
  if (w.concurrency > 0 && w.request_rate_per_s > 0)
    return make_error("invalid_value", path.key("request_rate").str(),
                      "Give either workload.concurrency (closed loop) or workload.request_rate (open loop), not both.");
  if (w.concurrency == 0 && w.request_rate_per_s == 0)
    return json::missing_field(path, "concurrency",
                               "The workload needs concurrency (closed loop) or request_rate (open loop).");
  return w;
}

Expected<EngineSettings> engine_from_json(json::element e, const json::Path& path) {
  json::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return json::type_error(path, e, "an object");
  EngineSettings s;
  for (auto field : o) {
    const json::Path where = path.key(field.key);
    if (field.key == "max_num_batched_tokens") {
      auto v = json::read_int(field.value, where, 1, limits::kMaxBatchedTokens, false);
      if (!v) return v.error();
      s.max_num_batched_tokens = v.value();
    } else if (field.key == "max_num_seqs") {
      auto v = json::read_int(field.value, where, 1, limits::kMaxRequestsPerStep, false);
      if (!v) return v.error();
      s.max_num_seqs = v.value();
    } else if (field.key == "gpu_memory_utilization") {
      auto v = json::read_number_in(field.value, where, 0.01, 1);
      if (!v) return v.error();
      s.gpu_memory_utilization = v.value();
    } else if (field.key == "block_size") {
      auto v = json::read_int(field.value, where, 1, 128, false);
      if (!v) return v.error();
      s.block_size = v.value();
    } else if (field.key == "enable_chunked_prefill") {
      bool on = true;
      if (field.value.get_bool().get(on) != simdjson::SUCCESS)
        return json::type_error(where, field.value, "true or false");
      s.enable_chunked_prefill = on;
    } else {
      return json::unknown_field(path, field.key, kEngineFields);
    }
  }
  return s;
}

}  // namespace stepcalc
