// SPDX-License-Identifier: Apache-2.0
// The benchmark workloads, shared by the native (Google Benchmark) and the Wasm
// (node) harnesses: the conformance cases tagged bench:a, bench:b and bench:c, as
// the JSON text a caller would send, and the sweeps the report times.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "simdjson.h"

namespace stepcalc::bench {

/// One benchmark case: its tag and its request as minified JSON text.
struct BenchCase {
  std::string tag;   ///< "bench:a", "bench:b", "bench:c"
  std::string id;    ///< conformance case id
  std::string json;  ///< the request object exactly as in the file, minified
};

/// A sweep timed by the report: `axis` over `values`, from the request of `tag`.
struct BenchSweep {
  std::string name;
  std::string tag;
  std::string axis;
  std::vector<double> values;
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The cases tagged bench:a/b/c of the conformance file, in that order; empty when
/// the file is missing or malformed (the harness then reports and exits).
inline std::vector<BenchCase> load_bench_cases(const std::string& conformance_path) {
  std::vector<BenchCase> out;
  const std::string text = read_text(conformance_path);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::array items;
  if (parser.parse(text).get(doc) != simdjson::SUCCESS || doc.get_array().get(items) != simdjson::SUCCESS) return out;
  for (const char* tag : {"bench:a", "bench:b", "bench:c"}) {
    for (simdjson::dom::element item : items) {
      simdjson::dom::array tags;
      if (item["tags"].get_array().get(tags) != simdjson::SUCCESS) continue;
      bool match = false;
      for (simdjson::dom::element t : tags) {
        std::string_view name;
        match = match || (t.get_string().get(name) == simdjson::SUCCESS && name == tag);
      }
      if (!match) continue;
      std::string_view id;
      if (item["id"].get_string().get(id) != simdjson::SUCCESS) id = "";
      out.push_back(BenchCase{tag, std::string(id), simdjson::minify(item)});
      break;
    }
  }
  return out;
}

/// 1,000 values: start, start + step, ...
inline std::vector<double> ramp(double start, double step, size_t count = 1000) {
  std::vector<double> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = start + step * static_cast<double>(i);
  return v;
}

/// The two 1,000-point sweeps of the report: a plot of step time against KV length
/// for one decode (bench:a), and against the first prefill's length in a mixed step
/// of 2 prefills + 64 decodes (bench:b). The budget is judged on the latter.
inline std::vector<BenchSweep> bench_sweeps() {
  return {BenchSweep{"sweep_a_decode_kv", "bench:a", "decode_kv", ramp(16, 16)},
          BenchSweep{"sweep_b_prefill_tokens", "bench:b", "prefill_tokens", ramp(16, 16)}};
}

/// The serving benchmark of docs/SERVING.md's speed budget (issue 13): 1,000 requests of
/// 1,024 tokens in and 1,024 out from 64 closed-loop clients, Qwen3-32B at TP 4 on the
/// H100 (the measured serving runs' setting), in `mode`. About 16,000 engine steps.
inline std::string serve_bench_request(const std::string& mode) {
  return R"({"model":"qwen3-32b","tp":4,"mode":")" + mode +
         R"(","workload":{"input_tokens":1024,"output_tokens":1024,"concurrency":64,"num_requests":1000}})";
}

/// The modes the serving benchmark runs (measured reads the H100's kernel packs).
inline std::vector<std::string> serve_bench_modes() { return {"blis-v2", "corrected", "measured"}; }

}  // namespace stepcalc::bench
