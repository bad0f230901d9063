// SPDX-License-Identifier: Apache-2.0
// Sweeps: one request priced at many values of one axis (or two, for heat maps),
// at summary detail through one pricer, so the setup is resolved once per distinct
// tp and no point allocates once the step's buffers have grown.
#include <cmath>

#include "api/api.h"
#include "api/pricing_session.h"
#include "base/input_limits.h"
#include "io/request_json.h"
#include "io/result_json.h"
#include "json/json_writer.h"

namespace stepcalc {
namespace {

enum class Axis { kPrefillTokens, kDecodeBatch, kDecodeKv, kTp };

/// The whole numbers an axis accepts.
struct AxisRange {
  int64_t min, max;
  bool holds(double v) const {
    return std::isfinite(v) && v == std::trunc(v) && v >= static_cast<double>(min) && v <= static_cast<double>(max);
  }
};

/// `name` as an axis of sweep_axes() (in the Axis order) with its range; false if unknown.
bool parse_axis(const std::string& name, Axis* axis, AxisRange* range) {
  const std::vector<SweepAxis>& axes = sweep_axes();
  for (size_t i = 0; i < axes.size(); ++i) {
    if (name != axes[i].name) continue;
    *axis = static_cast<Axis>(i);
    *range = {axes[i].min, axes[i].max};
    return true;
  }
  return false;
}

Error unknown_axis(const std::string& name, const char* path) {
  std::string names;
  for (const SweepAxis& a : sweep_axes()) names += (names.empty() ? "" : ", ") + std::string(a.name);
  return make_error("invalid_value", path,
                    "Unknown sweep axis '" + utf8_prefix(name, limits::kMaxEchoBytes) + "'; axes: " + names + ".");
}

Error too_many_points() {
  return make_error("out_of_range", "values",
                    "A sweep may have at most " + std::to_string(limits::kMaxSweepPoints) + " points.");
}

Error value_error(const std::string& axis, AxisRange range, const std::string& path) {
  return make_error("invalid_value", path,
                    "Sweep values for " + axis + " must be whole numbers in [" + std::to_string(range.min) + ", " +
                        std::to_string(range.max) + "].");
}

/// Sets `axis` of `r` to `v`; decode_batch rebuilds the decodes from `base`'s.
void apply(Request* r, const Request& base, Axis axis, int64_t v) {
  Step& s = r->step;
  switch (axis) {
    case Axis::kPrefillTokens:
      if (s.prefill.empty()) s.prefill.push_back({0, 0});
      s.prefill.front().new_tokens = v;
      break;
    case Axis::kDecodeBatch: {
      const std::vector<DecodeRequest>& from = base.step.decode;
      s.decode.resize(static_cast<size_t>(v));
      for (size_t i = 0; i < s.decode.size(); ++i)
        s.decode[i] = from.empty() ? DecodeRequest{kSweepDefaultDecodeKv, 1} : from[i % from.size()];
      break;
    }
    case Axis::kDecodeKv:
      if (s.decode.empty()) s.decode.push_back({0, 1});
      for (DecodeRequest& d : s.decode) d.progress_index = v;
      break;
    case Axis::kTp:
      r->tp = v;
      break;
  }
}

/// Requests priced at a point: the fixed ones plus the swept batch.
int64_t point_work(const Request& probe, Axis axis, double v) {
  const bool batch = axis == Axis::kDecodeBatch;
  return static_cast<int64_t>(probe.step.prefill.size() + (batch ? 0 : probe.step.decode.size())) +
         (batch ? static_cast<int64_t>(v) : 0);
}

Error too_much_work() {
  return make_error("too_many_requests", "values",
                    "The sweep would price more than " + std::to_string(limits::kMaxSweepRequests) +
                        " requests in all; use fewer or smaller points.");
}

/// The swept step (probed at value 1) must hold at most the requests a step may.
Expected<bool> check_step_size(const Request& probe) {
  if (static_cast<int64_t>(probe.step.prefill.size() + probe.step.decode.size()) > limits::kMaxRequestsPerStep)
    return make_error("too_many_requests", "step",
                      "A step may hold at most " + std::to_string(limits::kMaxRequestsPerStep) + " requests.");
  return true;
}

/// Prices `base` at every value of one axis; `point(i, summary or error)` in order.
template <typename OnPoint>
Expected<bool> sweep_1d(std::string_view json, const std::string& axis_name, const std::vector<double>& values,
                        const KernelRegistry& kernels, OnPoint point) {
  auto parsed = parse_request(json);
  if (!parsed) return parsed.error();
  if (values.size() > limits::kMaxSweepPoints) return too_many_points();
  Axis axis;
  AxisRange range;
  if (!parse_axis(axis_name, &axis, &range)) return unknown_axis(axis_name, "axis");
  const Request& base = parsed.value();
  Request probe = base;
  apply(&probe, base, axis, 1);
  int64_t work = 0;  // bound the requests priced over all points, not only the point count
  for (double v : values)
    if (range.holds(v) && (work += point_work(probe, axis, v)) > limits::kMaxSweepRequests) return too_much_work();
  const auto step_size = check_step_size(probe);
  if (!step_size) return step_size.error();
  PricingSession pricer(embedded_h100_tables(), kernels);
  Request r = base;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!range.holds(values[i])) {
      point(i, Expected<StepSummary>(value_error(axis_name, range, "values[" + std::to_string(i) + "]")));
      continue;
    }
    if (axis == Axis::kDecodeBatch) r.step.decode = base.step.decode;
    apply(&r, base, axis, static_cast<int64_t>(values[i]));
    point(i, pricer.summary(r));
  }
  return true;
}

}  // namespace

const std::vector<SweepAxis>& sweep_axes() {
  // In the order of Axis.
  static const std::vector<SweepAxis> kAxes = {
      {"prefill_tokens", "tokens", 0, limits::kMaxTokens},
      {"decode_batch", "requests", 1, limits::kMaxRequestsPerStep},
      {"decode_kv", "tokens", 0, limits::kMaxTokens},
      {"tp", "GPUs", 1, limits::kMaxTp},
  };
  return kAxes;
}

Expected<std::string> sweep_json(std::string_view json, const std::string& axis, const std::vector<double>& values) {
  return sweep_json(json, axis, values, no_kernels());
}

Expected<std::string> sweep_json(std::string_view json, const std::string& axis, const std::vector<double>& values,
                                 const KernelRegistry& kernels) {
  JsonWriter w;
  w.begin_array();
  auto swept = sweep_1d(json, axis, values, kernels, [&](size_t i, const Expected<StepSummary>& s) {
    w.begin_object().field("value", values[i]);
    if (s) {
      w.field("step_time_us", s->step_time_us)
          .field("total_us", s->total_us)
          .field("bound", step_bound_name(s->bound))
          .field("prefill_s", s->prefill_s)
          .field("decode_s", s->decode_s);
    } else {
      write_error(w, s.error());
    }
    w.end_object();
  });
  if (!swept) return swept.error();
  w.end_array();
  return w.take();
}

Expected<SummaryColumns> sweep_columns(std::string_view json, const std::string& axis,
                                       const std::vector<double>& values) {
  return sweep_columns(json, axis, values, no_kernels());
}

Expected<SummaryColumns> sweep_columns(std::string_view json, const std::string& axis,
                                       const std::vector<double>& values, const KernelRegistry& kernels) {
  SummaryColumns out;
  out.reserve(values.size());
  auto swept = sweep_1d(json, axis, values, kernels, [&](size_t, const Expected<StepSummary>& s) {
    if (s)
      out.add(s.value());
    else
      out.add_error(s.error());
  });
  if (!swept) return swept.error();
  return out;
}

Expected<SummaryColumns> sweep_2d(std::string_view json, const std::string& axis_x, const std::vector<double>& xs,
                                  const std::string& axis_y, const std::vector<double>& ys) {
  return sweep_2d(json, axis_x, xs, axis_y, ys, no_kernels());
}

Expected<SummaryColumns> sweep_2d(std::string_view json, const std::string& axis_x, const std::vector<double>& xs,
                                  const std::string& axis_y, const std::vector<double>& ys,
                                  const KernelRegistry& kernels) {
  auto parsed = parse_request(json);
  if (!parsed) return parsed.error();
  if (xs.size() * ys.size() > limits::kMaxSweepPoints || xs.size() > limits::kMaxSweepPoints ||
      ys.size() > limits::kMaxSweepPoints)
    return too_many_points();
  Axis ax, ay;
  AxisRange rx, ry;
  if (!parse_axis(axis_x, &ax, &rx)) return unknown_axis(axis_x, "axis_x");
  if (!parse_axis(axis_y, &ay, &ry)) return unknown_axis(axis_y, "axis_y");
  if (ax == ay) return make_error("invalid_value", "axis_y", "A 2-D sweep needs two different axes.");
  const Request& base = parsed.value();
  // decode_batch rebuilds the decodes, so it is applied before the other axis.
  const bool y_first = ay == Axis::kDecodeBatch || ax != Axis::kDecodeBatch;
  Request probe = base;
  apply(&probe, base, y_first ? ay : ax, 1);
  apply(&probe, base, y_first ? ax : ay, 1);
  int64_t work = 0;
  for (double y : ys) {
    if (!ry.holds(y)) continue;
    for (double x : xs) {
      if (!rx.holds(x)) continue;
      const bool batch_x = ax == Axis::kDecodeBatch, batch_y = ay == Axis::kDecodeBatch;
      work += static_cast<int64_t>(probe.step.prefill.size()) +
              (batch_x   ? static_cast<int64_t>(x)
               : batch_y ? static_cast<int64_t>(y)
                         : 0) +
              (batch_x || batch_y ? 0 : static_cast<int64_t>(probe.step.decode.size()));
      if (work > limits::kMaxSweepRequests) return too_much_work();
    }
  }
  const auto step_size = check_step_size(probe);
  if (!step_size) return step_size.error();
  PricingSession pricer(embedded_h100_tables(), kernels);
  SummaryColumns out;
  out.reserve(xs.size() * ys.size());
  Request r = base;
  for (size_t i = 0; i < ys.size(); ++i) {
    for (size_t j = 0; j < xs.size(); ++j) {
      if (!ry.holds(ys[i])) {
        out.add_error(value_error(axis_y, ry, "values_y[" + std::to_string(i) + "]"));
        continue;
      }
      if (!rx.holds(xs[j])) {
        out.add_error(value_error(axis_x, rx, "values_x[" + std::to_string(j) + "]"));
        continue;
      }
      r.step = base.step;  // assignment reuses the vectors' capacity
      r.tp = base.tp;
      apply(&r, base, y_first ? ay : ax, static_cast<int64_t>(y_first ? ys[i] : xs[j]));
      apply(&r, base, y_first ? ax : ay, static_cast<int64_t>(y_first ? xs[j] : ys[i]));
      auto s = pricer.summary(r);
      if (s)
        out.add(s.value());
      else
        out.add_error(s.error());
    }
  }
  return out;
}

}  // namespace stepcalc
