// SPDX-License-Identifier: Apache-2.0
#include "io/workload_json.h"

#include <string>
#include <vector>

#include "base/input_limits.h"

namespace stepcalc {
namespace {

constexpr const char* kWorkloadFields =
    "input_tokens, output_tokens, concurrency, request_rate, num_requests, warmup_requests, warmup_drain, "
    "prefix_cache_hit_ratio, seed, api_overhead_ms";
constexpr const char* kLengthFields = "distribution, mean, stddev, min, max";
constexpr const char* kEngineFields =
    "max_num_batched_tokens, max_num_seqs, gpu_memory_utilization, block_size, enable_chunked_prefill";

Expected<int64_t> tokens(json::element e, const json::Path& path, int64_t min) {
  return json::read_int(e, path, min, limits::kMaxServeTokensPerRequest, false);
}

const char* kind_name(LengthDistribution::Kind k) {
  using Kind = LengthDistribution::Kind;
  return k == Kind::kFixed ? "fixed" : k == Kind::kUniform ? "uniform" : k == Kind::kNormal ? "normal" : "exponential";
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
  std::vector<std::string> given;  // the numeric fields present, to refuse those the kind does not use
  auto read = json::read_fields(
      e, path, [&](std::string_view key, json::element value, const json::Path& where) -> Expected<bool> {
        if (key == "distribution") {
          auto name = json::read_string(value, where);
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
          return true;
        }
        if (key != "distribution") given.emplace_back(key);
        if (key == "stddev")
          return json::store(
              json::read_number_in(value, where, 0, static_cast<double>(limits::kMaxServeTokensPerRequest)), &d.stddev);
        if (key == "mean" || key == "min" || key == "max") {
          have_mean = have_mean || key == "mean";
          return json::store(tokens(value, where, 1), key == "mean" ? &d.mean : key == "min" ? &d.min : &d.max);
        }
        return json::unknown_field(path, key, kLengthFields);
      });
  if (!read) return read.error();
  if (!have_kind) return json::missing_field(path, "distribution");
  // Each kind reads only some fields; one it would ignore is refused rather than echoed unused.
  const char* const uses = d.kind == Kind::kFixed         ? "mean"
                           : d.kind == Kind::kUniform     ? "min, max"
                           : d.kind == Kind::kExponential ? "mean, min, max"
                                                          : "mean, stddev, min, max";
  for (const std::string& key : given) {
    const bool used = d.kind == Kind::kFixed         ? key == "mean"
                      : d.kind == Kind::kUniform     ? key == "min" || key == "max"
                      : d.kind == Kind::kExponential ? key != "stddev"
                                                     : true;
    if (!used)
      return make_error(
          "invalid_value", path.key(key).str(),
          path.str() + "." + key + " is not used by a " + kind_name(d.kind) + " distribution (it reads " + uses + ").");
  }
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
  Workload w;
  bool have_input = false, have_output = false;
  auto read = json::read_fields(
      e, path, [&](std::string_view key, json::element value, const json::Path& where) -> Expected<bool> {
        if (key == "input_tokens" || key == "output_tokens") {
          const bool input = key == "input_tokens";
          (input ? have_input : have_output) = true;
          return json::store(length_from_json(value, where), input ? &w.input_tokens : &w.output_tokens);
        }
        if (key == "concurrency")
          return json::store(json::read_int(value, where, 1, limits::kMaxServeConcurrency, false), &w.concurrency);
        if (key == "request_rate")
          return json::store(json::read_number_in(value, where, 1e-9, limits::kMaxServeRequestRate),
                             &w.request_rate_per_s);
        if (key == "num_requests")
          return json::store(json::read_int(value, where, 1, limits::kMaxServeRequests, false), &w.num_requests);
        if (key == "warmup_requests")
          return json::store(json::read_int(value, where, 0, limits::kMaxServeRequests, false), &w.warmup_requests);
        if (key == "warmup_drain") return json::store(json::read_bool(value, where), &w.warmup_drain);
        if (key == "prefix_cache_hit_ratio")
          return json::store(json::read_number_in(value, where, 0, 1), &w.prefix_cache_hit_ratio);
        if (key == "seed") {
          auto v = json::read_int(value, where, 0, int64_t{1} << 53, false);
          if (!v) return v.error();
          w.seed = static_cast<uint64_t>(v.value());
          return true;
        }
        if (key == "api_overhead_ms") {
          auto v = json::read_number_in(value, where, 0, limits::kMaxApiOverheadMs);
          if (!v) return v.error();
          w.api_overhead_us = v.value() * 1e3;
          return true;
        }
        return json::unknown_field(path, key, kWorkloadFields);
      });
  if (!read) return read.error();
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
  EngineSettings s;
  auto read = json::read_fields(
      e, path, [&](std::string_view key, json::element value, const json::Path& where) -> Expected<bool> {
        if (key == "max_num_batched_tokens")
          return json::store(json::read_int(value, where, 1, limits::kMaxBatchedTokens, false),
                             &s.max_num_batched_tokens);
        if (key == "max_num_seqs")
          return json::store(json::read_int(value, where, 1, limits::kMaxRequestsPerStep, false), &s.max_num_seqs);
        if (key == "gpu_memory_utilization")
          return json::store(json::read_number_in(value, where, 0.01, 1), &s.gpu_memory_utilization);
        if (key == "block_size") return json::store(json::read_int(value, where, 1, 128, false), &s.block_size);
        if (key == "enable_chunked_prefill")
          return json::store(json::read_bool(value, where), &s.enable_chunked_prefill);
        return json::unknown_field(path, key, kEngineFields);
      });
  if (!read) return read.error();
  return s;
}

}  // namespace stepcalc
