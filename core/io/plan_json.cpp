// SPDX-License-Identifier: Apache-2.0
#include "io/plan_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/input_limits.h"
#include "io/model_config.h"
#include "io/request_json.h"
#include "io/result_json.h"
#include "io/serve_result_json.h"
#include "io/workload_json.h"
#include "json/json_writer.h"
#include "kernels/gpu_spec.h"
#include "plan/plan_defaults.h"

namespace stepcalc {
namespace {

using json::element;
using json::Path;

constexpr size_t kMaxSearchValues = 16;  ///< entries of each search array
constexpr double kMaxSloMs = 1e7;

const char* const kPlanFields = "model, gpus, gpu_hour_usd, workload, slo, search, engine, hf_model";
const char* const kSloFields = "ttft_ms, tpot_ms, e2e_ms, percentile";
const char* const kSearchFields = "tp, dp, expert_parallel, max_gpus, engine, kv_cache_dtype, quantization";

/// An array of at most kMaxSearchValues items, each read by `item`.
template <typename F>
Expected<bool> read_array(element e, const Path& path, F item) {
  if (!e.is_array()) return json::type_error(path, e, "an array");
  simdjson::dom::array a = e.get_array().value_unsafe();
  if (a.size() == 0) return make_error("invalid_value", path.str(), path.str() + " must not be empty.");
  if (a.size() > kMaxSearchValues)
    return make_error("out_of_range", path.str(),
                      path.str() + " has more than " + std::to_string(kMaxSearchValues) + " entries.");
  size_t i = 0;
  for (element v : a) {
    auto ok = item(v, path.index(i++));
    if (!ok) return ok.error();
  }
  return true;
}

template <size_t N>
Expected<std::string> read_choice_name(element e, const Path& where, const RequestChoice (&choices)[N]) {
  auto s = json::read_string(e, where);
  if (!s) return s.error();
  std::string names;
  for (const RequestChoice& c : choices) {
    if (s.value() == c.value) return s;
    names += (names.empty() ? "" : ", ") + std::string(c.value);
  }
  return make_error("invalid_value", where.str(), where.str() + " must be one of " + names + ".");
}

std::string number_text(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// `e` written back as JSON text (the model and workload fields a candidate's serve request
/// repeats), with the module's own writer rather than simdjson's serializer.
void write_element(JsonWriter& w, element e) {
  switch (e.type()) {
    case simdjson::dom::element_type::OBJECT: {
      const simdjson::dom::object o = e.get_object().value_unsafe();
      w.begin_object();
      for (auto [k, v] : o) {
        w.key(k);
        write_element(w, v);
      }
      w.end_object();
      return;
    }
    case simdjson::dom::element_type::ARRAY: {
      const simdjson::dom::array a = e.get_array().value_unsafe();
      w.begin_array();
      for (element v : a) write_element(w, v);
      w.end_array();
      return;
    }
    case simdjson::dom::element_type::STRING:
      w.value(e.get_string().value_unsafe());
      return;
    case simdjson::dom::element_type::INT64:
      w.value(e.get_int64().value_unsafe());
      return;
    case simdjson::dom::element_type::UINT64:
      w.value(static_cast<double>(e.get_uint64().value_unsafe()));
      return;
    case simdjson::dom::element_type::DOUBLE:
      w.value(e.get_double().value_unsafe());
      return;
    case simdjson::dom::element_type::BOOL:
      w.value(e.get_bool().value_unsafe());
      return;
    case simdjson::dom::element_type::NULL_VALUE:
      w.null();
      return;
  }
}

std::string element_text(element e) {
  JsonWriter w;
  write_element(w, e);
  return w.take();
}

struct Search {
  std::vector<int64_t> tp{1, 2, 4, 8};
  std::vector<int64_t> dp{1};
  std::vector<bool> expert_parallel;  ///< empty: the default (MoE: false and true; dense: false)
  std::vector<EngineSettings> engines{EngineSettings{}};
  std::vector<std::string> kv{"auto"}, quant{"none"};
};

/// One expert/data-parallel layout of a TP degree: dp ranks, ep 1 (experts split by TP) or tp x dp.
struct Layout {
  int64_t dp = 1, ep = 1;
};

/// The layouts the search tries at `tp` (docs/PLAN.md, "The request"): every dp x
/// expert_parallel of the search (without expert parallelism the experts sliced over tp x dp),
/// ep 1 where tp x dp is 1, each layout once. A dense model has dp 1 and ep 1.
std::vector<Layout> layouts_at(const Search& search, int64_t tp, bool moe) {
  std::vector<Layout> out;
  for (int64_t dp : search.dp)
    for (bool ep : search.expert_parallel) {
      const Layout l{dp, moe && ep && tp * dp > 1 ? tp * dp : 1};
      const bool seen =
          std::any_of(out.begin(), out.end(), [&](const Layout& o) { return o.dp == l.dp && o.ep == l.ep; });
      if (!seen) out.push_back(l);
    }
  return out;
}

/// The serve request text of one candidate (a replica at the plan's total traffic); ep and dp
/// are written when above 1.
std::string candidate_json(const PlanRequest& p, const std::string& gpu, int64_t tp, const Layout& layout,
                           const EngineSettings& e, const std::string& kv, const std::string& q, const Workload& w) {
  JsonWriter out;
  out.begin_object();
  out.key("model").raw(p.model_json);
  out.fields({{"gpu", gpu}, {"tp", tp}});
  if (layout.ep > 1) out.field("ep", layout.ep);
  if (layout.dp > 1) out.field("dp", layout.dp);
  out.field("mode", "measured");
  out.key("workload").begin_object();
  for (const std::string& f : p.workload_fields) out.raw(f);
  if (w.concurrency > 0)
    out.field("concurrency", w.concurrency);
  else
    out.key("request_rate").raw(number_text(w.request_rate_per_s));
  if (w.num_requests > 0) out.field("num_requests", w.num_requests);
  if (w.warmup_requests > 0) out.field("warmup_requests", w.warmup_requests);
  out.end_object();
  out.key("engine").begin_object();
  if (e.max_num_batched_tokens > 0) out.field("max_num_batched_tokens", e.max_num_batched_tokens);
  if (e.max_num_seqs > 0) out.field("max_num_seqs", e.max_num_seqs);
  if (e.gpu_memory_utilization > 0) out.key("gpu_memory_utilization").raw(number_text(e.gpu_memory_utilization));
  if (e.block_size > 0) out.field("block_size", e.block_size);
  out.end_object();
  out.fields({{"quantization", q}, {"kv_cache_dtype", kv}});
  out.end_object();
  return out.take();
}

}  // namespace

Expected<PlanRequest> parse_plan_request(std::string_view text) {
  simdjson::dom::parser parser;
  auto doc = json::parse_document(parser, text, limits::kMaxJsonDepth);
  if (!doc) return doc.error();
  element root = doc.value();
  const Path path;
  if (!root.is_object()) return json::type_error(Path("request"), root, "an object");
  auto unique = json::check_unique_keys(root, path);
  if (!unique) return unique.error();
  PlanRequest p;
  Search search;
  EngineSettings base_engine;
  std::optional<element> model, workload, slo, prices;
  bool search_engine_given = false;
  auto read =
      json::read_fields(root, path, [&](std::string_view key, element value, const Path& where) -> Expected<bool> {
        if (key == "model") return model = value, Expected<bool>(true);
        if (key == "workload") return workload = value, Expected<bool>(true);
        if (key == "slo") return slo = value, Expected<bool>(true);
        if (key == "gpu_hour_usd") return prices = value, Expected<bool>(true);
        if (key == "hf_model") return json::store(json::read_string(value, where), &p.hf_model);
        if (key == "engine") return json::store(engine_from_json(value, where), &base_engine);
        if (key == "gpus")
          return read_array(value, where, [&](element v, const Path& at) -> Expected<bool> {
            auto name = json::read_string(v, at);
            if (!name) return name.error();
            const GpuSpec* spec = find_gpu_spec(name.value());
            if (spec == nullptr || spec->kernel_versions.empty())
              return make_error("invalid_value", at.str(),
                                at.str() + " must name a GPU with measured tables (" + gpu_spec_names() + ").");
            if (std::find(p.gpus.begin(), p.gpus.end(), spec->name) != p.gpus.end())
              return make_error("invalid_value", at.str(), at.str() + " repeats " + spec->name + ".");
            p.gpus.push_back(spec->name);
            return true;
          });
        if (key == "search")
          return json::read_fields(value, where, [&](std::string_view k, element v, const Path& at) -> Expected<bool> {
            if (k == "tp" || k == "dp") {  // sizes in [1, 64]
              std::vector<int64_t>& sizes = k == "tp" ? search.tp : search.dp;
              sizes.clear();
              return read_array(v, at, [&](element t, const Path& ti) -> Expected<bool> {
                auto n = json::read_int(t, ti, 1, 64, false);
                if (!n) return n.error();
                sizes.push_back(n.value());
                return true;
              });
            }
            if (k == "expert_parallel") {
              search.expert_parallel.clear();
              return read_array(v, at, [&](element b, const Path& bi) -> Expected<bool> {
                auto on = json::read_bool(b, bi);
                if (!on) return on.error();
                search.expert_parallel.push_back(on.value());
                return true;
              });
            }
            if (k == "max_gpus") return json::store(json::read_int(v, at, 1, kMaxPlanGpus, false), &p.input.max_gpus);
            if (k == "engine") {
              search.engines.clear();
              search_engine_given = true;
              return read_array(v, at, [&](element o, const Path& oi) -> Expected<bool> {
                auto e = engine_from_json(o, oi);
                if (!e) return e.error();
                search.engines.push_back(e.value());
                return true;
              });
            }
            if (k == "kv_cache_dtype" || k == "quantization") {
              std::vector<std::string>& out = k == "kv_cache_dtype" ? search.kv : search.quant;
              out.clear();
              return read_array(v, at, [&](element s, const Path& si) -> Expected<bool> {
                auto name = k == "kv_cache_dtype" ? read_choice_name(s, si, kKvCacheDtypeChoices)
                                                  : read_choice_name(s, si, kQuantizationChoices);
                if (!name) return name.error();
                out.push_back(name.value());
                return true;
              });
            }
            return json::unknown_field(where, k, kSearchFields);
          });
        return json::unknown_field(path, key, kPlanFields);
      });
  if (!read) return read.error();
  if (!model) return json::missing_field(path, "model", "A plan needs a model (preset name or config object).");
  if (!workload)
    return json::missing_field(path, "workload",
                               "A plan needs a workload, e.g. {\"input_tokens\": 1000, \"output_tokens\": 300, "
                               "\"request_rate\": 2}.");
  if (!slo)
    return json::missing_field(path, "slo",
                               "A plan needs a latency target, e.g. {\"ttft_ms\": 1000, \"tpot_ms\": 50}.");
  // The latency target.
  PlanSlo& s = p.input.slo;
  const Path slo_path = path.key("slo");
  auto slo_read =
      json::read_fields(*slo, slo_path, [&](std::string_view k, element v, const Path& at) -> Expected<bool> {
        if (k == "ttft_ms") return json::store(json::read_number_in(v, at, 1e-3, kMaxSloMs), &s.ttft_ms);
        if (k == "tpot_ms") return json::store(json::read_number_in(v, at, 1e-3, kMaxSloMs), &s.tpot_ms);
        if (k == "e2e_ms") return json::store(json::read_number_in(v, at, 1e-3, kMaxSloMs), &s.e2e_ms);
        if (k == "percentile") {
          auto n = json::read_int(v, at, 50, 99, false);
          if (!n) return n.error();
          if (n.value() != 50 && n.value() != 90 && n.value() != 99)
            return make_error("invalid_value", at.str(), at.str() + " must be 50, 90 or 99.");
          s.percentile = static_cast<int>(n.value());
          return true;
        }
        return json::unknown_field(slo_path, k, kSloFields);
      });
  if (!slo_read) return slo_read.error();
  if (s.ttft_ms <= 0 && s.tpot_ms <= 0 && s.e2e_ms <= 0)
    return make_error("missing_field", "slo", "slo needs at least one of ttft_ms, tpot_ms, e2e_ms.");
  // The workload: validated as serve validates it; its fields but the traffic kept for each candidate.
  auto wl = workload_from_json(*workload, path.key("workload"));
  if (!wl) return wl.error();
  p.workload = wl.value();
  if (p.workload.concurrency == 0 && !(p.workload.request_rate_per_s > 0))
    return make_error("missing_field", "workload", "The workload needs request_rate or concurrency.");
  const simdjson::dom::object workload_object = workload->get_object().value_unsafe();
  for (auto [k, v] : workload_object) {
    if (k == "num_requests") p.input.num_requests_given = true;
    if (k == "warmup_requests") p.input.warmup_given = true;
    if (k == "request_rate" || k == "concurrency" || k == "num_requests" || k == "warmup_requests") continue;
    p.workload_fields.push_back(json_quote(k) + ":" + element_text(v));
  }
  // GPUs and prices.
  if (p.gpus.empty())
    for (const GpuSpec& g : gpu_specs())  // measured on tables of their own (not a sibling's, scaled)
      if (!g.kernel_versions.empty() && g.kernels_from.empty()) p.gpus.push_back(g.name);
  for (const std::string& g : p.gpus) p.gpu_hour_usd[g] = default_gpu_hour_usd(g) > 0 ? default_gpu_hour_usd(g) : -1;
  if (prices) {
    p.prices_given = true;
    const Path where = path.key("gpu_hour_usd");
    if (json::is_number(*prices)) {
      auto all = json::read_number_in(*prices, where, 0, limits::kMaxGpuHourUsd);
      if (!all) return all.error();
      for (auto& [g, usd] : p.gpu_hour_usd) usd = all.value();
    } else {
      auto each =
          json::read_fields(*prices, where, [&](std::string_view k, element v, const Path& at) -> Expected<bool> {
            const GpuSpec* spec = find_gpu_spec(k);
            if (spec == nullptr) return json::unknown_field(where, k, gpu_spec_names());
            auto usd = json::read_number_in(v, at, 0, limits::kMaxGpuHourUsd);
            if (!usd) return usd.error();
            p.gpu_hour_usd[spec->name] = usd.value();
            return true;
          });
      if (!each) return each.error();
    }
  }
  // Expert- and data-parallel layouts: a MoE model's (docs/PLAN.md); a dense model's dp
  // ranks would be replicas, which the plan counts itself.
  auto shape = model_from_json(*model, path.key("model"));
  if (!shape) return shape.error();
  const bool moe = shape->spec.is_moe();
  if (search.expert_parallel.empty())
    search.expert_parallel = moe ? std::vector<bool>{false, true} : std::vector<bool>{false};
  for (size_t i = 0; i < search.dp.size(); ++i) {
    if (search.dp[i] == 1) continue;
    const std::string at = path.key("search").key("dp").index(i).str();
    if (!moe)
      return make_error("invalid_value", at,
                        at + " asks for " + std::to_string(search.dp[i]) +
                            " data-parallel ranks of a dense model: they would be replicas, which the plan counts "
                            "itself; use dp 1 (data parallelism is searched for MoE models).");
  }
  size_t layouts = 0;
  for (int64_t tp : search.tp) layouts += layouts_at(search, tp, moe).size();
  const size_t count = p.gpus.size() * layouts * search.engines.size() * search.kv.size() * search.quant.size();
  if (count > static_cast<size_t>(kMaxPlanCandidates))
    return make_error("too_large", "search",
                      "The search would try " + std::to_string(count) + " configurations; at most " +
                          std::to_string(kMaxPlanCandidates) +
                          " (narrow gpus, search.tp, search.dp, search.expert_parallel, search.engine, ...).");
  (void)search_engine_given;
  p.model_json = element_text(*model);
  // Every candidate's serve request, validated as `stepcalc serve` validates it.
  for (const std::string& gpu : p.gpus)
    for (int64_t tp : search.tp)
      for (const Layout& layout : layouts_at(search, tp, moe))
        for (const EngineSettings& asked : search.engines)
          for (const std::string& kv : search.kv)
            for (const std::string& q : search.quant) {
              EngineSettings e = base_engine;
              if (asked.max_num_batched_tokens > 0) e.max_num_batched_tokens = asked.max_num_batched_tokens;
              if (asked.max_num_seqs > 0) e.max_num_seqs = asked.max_num_seqs;
              if (asked.gpu_memory_utilization > 0) e.gpu_memory_utilization = asked.gpu_memory_utilization;
              if (asked.block_size > 0) e.block_size = asked.block_size;
              PlanCandidateInput c;
              c.gpu = gpu;
              c.tp = tp;
              c.ep = layout.ep;
              c.dp = layout.dp;
              c.engine_asked = e;
              c.kv_cache_dtype = kv;
              c.quantization = q;
              c.gpu_hour_usd = p.gpu_hour_usd[gpu];
              auto parsed = parse_request(candidate_json(p, gpu, tp, layout, e, kv, q, p.workload));
              if (!parsed) {
                // A model-level error is the plan's: every candidate would share it.
                if (parsed.error().path.rfind("model", 0) == 0 || parsed.error().path.rfind("workload", 0) == 0)
                  return parsed.error();
                c.error = parsed.error();
              } else if (parsed->model.num_heads % tp != 0) {
                c.error = make_error("invalid_value", "tp",
                                     "TP " + std::to_string(tp) + " does not divide the model's " +
                                         std::to_string(parsed->model.num_heads) + " attention heads.");
              } else {
                c.valid = true;
                c.request = parsed.value();
                if (p.model_name.empty()) p.model_name = c.request.model_name;
              }
              p.input.candidates.push_back(std::move(c));
            }
  if (p.hf_model.empty()) {
    for (const PlanCandidateInput& c : p.input.candidates)
      if (c.valid) {
        p.hf_model = preset_hf_id(c.request.model.preset);
        break;
      }
  }
  return p;
}

namespace {

void write_stats(JsonWriter& w, const char* name, const LatencyStats& s) {
  w.object(name, {{"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}});
}

std::string vllm_serve_line(const PlanRequest& p, const PlanCandidate& c) {
  const EngineSettings& e = c.serve.engine;
  const std::string id = !p.hf_model.empty() ? p.hf_model : !p.model_name.empty() ? p.model_name : "<hf-model-id>";
  std::string line = "vllm serve " + id + " --tensor-parallel-size " + std::to_string(c.input.tp);
  if (c.input.dp > 1) line += " --data-parallel-size " + std::to_string(c.input.dp);
  if (c.input.ep > 1) line += " --enable-expert-parallel";
  line += " --max-num-seqs " + std::to_string(e.max_num_seqs) + " --max-num-batched-tokens " +
          std::to_string(e.max_num_batched_tokens);
  char util[32];
  std::snprintf(util, sizeof util, "%g", e.gpu_memory_utilization);
  line += std::string(" --gpu-memory-utilization ") + util;
  if (e.block_size != 16) line += " --block-size " + std::to_string(e.block_size);
  if (c.input.kv_cache_dtype != "auto") line += " --kv-cache-dtype " + c.input.kv_cache_dtype;
  if (c.input.quantization != "none") line += " --quantization " + c.input.quantization;
  return line;
}

void write_candidate(JsonWriter& w, const PlanCandidate& c, int percentile) {
  w.begin_object();
  w.fields({{"gpu", c.input.gpu},
            {"tp", c.input.tp},
            {"ep", c.input.ep},
            {"dp", c.input.dp},
            {"replicas", c.replicas},
            {"gpus_total", c.gpus_total},
            {"kv_cache_dtype", c.input.kv_cache_dtype},
            {"quantization", c.input.quantization},
            {"meets_slo", c.meets_slo}});
  if (c.meets_slo)
    w.key("reason").null();
  else
    w.field("reason", plan_reason_code(c.reason));
  if (!c.meets_slo) w.field("reason_message", c.reason_message);
  const EngineSettings& e = c.simulated ? c.serve.engine : c.input.engine_asked;
  w.object("engine", {{"max_num_seqs", e.max_num_seqs},
                      {"max_num_batched_tokens", e.max_num_batched_tokens},
                      {"gpu_memory_utilization", e.gpu_memory_utilization > 0 ? e.gpu_memory_utilization : 0.9}});
  w.fields({{"gpu_hour_usd", c.input.gpu_hour_usd}, {"cost_per_hour_usd", c.cost_per_hour_usd}});
  w.object("memory", {{"fits", c.memory.fits},
                      {"weights_bytes", c.memory.weights_bytes},
                      {"budget_bytes", c.memory.budget_bytes},
                      {"kv_cache_tokens", c.memory.kv_cache_tokens}});
  if (!c.simulated) {
    w.end_object();
    return;
  }
  const ServeResult& r = c.serve;
  const Workload& rw = c.replica_workload;
  w.key("replica_workload").begin_object();
  if (rw.concurrency > 0)
    w.field("concurrency", rw.concurrency);
  else
    w.field("request_rate", rw.request_rate_per_s);
  w.fields({{"num_requests", rw.num_requests}, {"warmup_requests", rw.warmup_requests}});
  w.end_object();
  write_stats(w, "ttft_ms", r.ttft_ms);
  write_stats(w, "tpot_ms", r.tpot_ms);
  write_stats(w, "e2e_ms", r.e2e_ms);
  w.fields({{"ttft_ms_at_percentile", plan_percentile(r.ttft_ms, percentile)},
            {"tpot_ms_at_percentile", plan_percentile(r.tpot_ms, percentile)},
            {"e2e_ms_at_percentile", plan_percentile(r.e2e_ms, percentile)}});
  const double replicas = static_cast<double>(c.replicas);
  w.object("throughput", {{"output_tokens_per_s", r.throughput.output_tokens_per_s * replicas},
                          {"requests_per_s", r.throughput.requests_per_s * replicas},
                          {"output_tokens_per_s_per_gpu", r.throughput.output_tokens_per_s_per_gpu},
                          {"output_tokens_per_s_per_user", c.output_tokens_per_s_per_user}});
  w.fields({{"usd_per_million_input_tokens", r.cost.usd_per_million_input_tokens},
            {"usd_per_million_output_tokens", r.cost.usd_per_million_output_tokens},
            {"usd_per_million_tokens_blended", r.cost.usd_per_million_tokens_blended},
            {"max_request_rate", c.max_request_rate},
            {"max_request_rate_total", c.max_request_rate * replicas}});
  w.object("scheduler", {{"preemptions", r.trace.preemptions},
                         {"peak_waiting", r.trace.peak_waiting},
                         {"mean_running", r.trace.mean_running}});
  write_validation(w, r.validation);
  w.end_object();
}

std::string money(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "$%.2f", v);
  return buf;
}

}  // namespace

std::string plan_result_to_json(const PlanRequest& p, const PlanResult& r, bool* all_finite) {
  const PlanSlo& s = p.input.slo;
  JsonWriter w;
  w.begin_object();
  w.fields({{"mode", "measured"}, {"model", p.model_name}, {"hf_model", p.hf_model}});
  w.key("slo").begin_object();
  if (s.ttft_ms > 0) w.field("ttft_ms", s.ttft_ms);
  if (s.tpot_ms > 0) w.field("tpot_ms", s.tpot_ms);
  if (s.e2e_ms > 0) w.field("e2e_ms", s.e2e_ms);
  w.field("percentile", s.percentile);
  w.end_object();
  w.key("workload").begin_object();
  if (p.workload.concurrency > 0)
    w.field("concurrency", p.workload.concurrency);
  else
    w.field("request_rate", p.workload.request_rate_per_s);
  w.end_object();
  w.key("gpu_hour_usd").begin_object();
  for (const auto& [g, usd] : p.gpu_hour_usd) w.field(g, usd);
  w.end_object();
  w.field("prices_source",
          p.prices_given ? "the request's gpu_hour_usd (GPUs it leaves out: presets/prices.json)" : kPlanPriceSource);
  int64_t requests = kPlanDefaultRequests;
  for (const PlanCandidate& c : r.candidates)
    if (c.simulated) {
      requests = (c.replica_workload.num_requests + c.input.dp - 1) / c.input.dp;  // one rank's share
      break;
    }
  w.object("search", {{"candidates", static_cast<int64_t>(r.candidates.size())},
                      {"simulations", r.simulations},
                      {"simulated_requests", r.simulated_requests},
                      {"requests_per_simulation", requests},
                      {"max_gpus", p.input.max_gpus}});
  w.key("candidates").begin_array();
  for (const PlanCandidate& c : r.candidates) write_candidate(w, c, s.percentile);
  w.end_array();
  w.key("frontier").begin_array();
  for (size_t i : r.frontier) w.value(static_cast<int64_t>(i));
  w.end_array();
  if (r.recommended < 0) {
    w.key("recommended").null();
  } else {
    const PlanCandidate& c = r.candidates[static_cast<size_t>(r.recommended)];
    const std::string pct = "p" + std::to_string(s.percentile);
    const double tokens = c.serve.mean_input_tokens + c.serve.mean_output_tokens;
    const double per_million =
        tokens > 0 && c.serve.throughput.requests_per_s > 0
            ? c.cost_per_hour_usd /
                  (c.serve.throughput.requests_per_s * static_cast<double>(c.replicas) * tokens * 3600) * 1e6
            : 0;
    std::string summary =
        std::to_string(c.gpus_total) + " x " + c.input.gpu + ", TP " + std::to_string(c.input.tp) +
        (c.input.dp > 1 ? ", DP " + std::to_string(c.input.dp) : std::string()) +
        (c.input.ep > 1 ? ", EP " + std::to_string(c.input.ep) : std::string()) + ", " +
        (c.replicas == 1 ? std::string("one replica") : std::to_string(c.replicas) + " replicas") + ": " +
        money(c.cost_per_hour_usd) + "/h, " + money(per_million) + " per million tokens, " + pct + " TTFT " +
        std::to_string(static_cast<int64_t>(std::lround(plan_percentile(c.serve.ttft_ms, s.percentile)))) + " ms, " +
        pct + " TPOT " +
        std::to_string(static_cast<int64_t>(std::lround(plan_percentile(c.serve.tpot_ms, s.percentile)))) + " ms";
    const double asked = p.workload.concurrency > 0
                             ? c.serve.throughput.requests_per_s * static_cast<double>(c.replicas)
                             : p.workload.request_rate_per_s;
    w.key("recommended").begin_object();
    w.fields({{"candidate", r.recommended},
              {"gpu", c.input.gpu},
              {"tp", c.input.tp},
              {"ep", c.input.ep},
              {"dp", c.input.dp},
              {"replicas", c.replicas},
              {"gpus_total", c.gpus_total},
              {"cost_per_hour_usd", c.cost_per_hour_usd},
              {"usd_per_million_tokens_blended", per_million},
              {"vllm_serve", vllm_serve_line(p, c)},
              {"summary", summary}});
    w.object("headroom",
             {{"request_rate", r.headroom_request_rate}, {"ratio", asked > 0 ? r.headroom_request_rate / asked : 0.0}});
    w.key("serve_request")
        .raw(candidate_json(p, c.input.gpu, c.input.tp, Layout{c.input.dp, c.input.ep}, c.serve.engine,
                            c.input.kv_cache_dtype, c.input.quantization, c.replica_workload));
    w.end_object();
  }
  if (r.closest < 0) {
    w.key("closest").null();
  } else {
    const PlanCandidate& c = r.candidates[static_cast<size_t>(r.closest)];
    w.object("closest",
             {{"candidate", r.closest}, {"reason", plan_reason_code(c.reason)}, {"reason_message", c.reason_message}});
  }
  w.end_object();
  if (all_finite != nullptr) *all_finite = !w.wrote_non_finite();
  return w.take();
}

}  // namespace stepcalc
