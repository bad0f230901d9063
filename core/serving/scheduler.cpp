// SPDX-License-Identifier: Apache-2.0
#include "serving/scheduler.h"

#include <algorithm>
#include <string>

namespace stepcalc {
namespace {

enum class Phase : uint8_t { kPending, kWaiting, kRunning, kFinished };

/// A request inside the engine. Token counts follow vLLM: `computed` tokens have
/// their KV in the cache; the request holds `input + generated` tokens, the last
/// sampled one not yet computed.
struct LiveRequest {
  int64_t input = 0, target_output = 0, cached = 0;
  int64_t computed = 0, generated = 0, blocks = 0;
  int64_t covered = 0;  ///< tokens the blocks hold (full-attention-only caches; 0 otherwise)
  /// With sliding windows: a decode up to `decode_until` tokens needs no other blocks while
  /// the request still holds `decode_blocks` (its blocks change only with the block count).
  int64_t decode_until = 0, decode_blocks = -1;
  double arrive_us = 0, last_token_us = 0;
  Phase phase = Phase::kPending;
};

/// Fixed-capacity double-ended queue of request indices (each request is queued
/// at most once at a time, so capacity = number of requests; no allocation).
class IndexQueue {
 public:
  explicit IndexQueue(size_t capacity) : slots_(capacity + 1) {}
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  size_t front() const { return slots_[head_]; }
  void pop_front() { head_ = (head_ + 1) % slots_.size(), --size_; }
  void push_front(size_t v) { head_ = (head_ + slots_.size() - 1) % slots_.size(), slots_[head_] = v, ++size_; }
  void push_back(size_t v) { slots_[(head_ + size_) % slots_.size()] = v, ++size_; }

 private:
  std::vector<size_t> slots_;
  size_t head_ = 0, size_ = 0;
};

struct Scheduled {
  size_t request;
  int64_t tokens;
};

class Simulation {
 public:
  Simulation(const std::vector<PlannedRequest>& plan, const SimulationSettings& s, StepPricer* pricer)
      : s_(s), pricer_(pricer), live_(plan.size()), waiting_(plan.size()) {
    trace_.requests.resize(plan.size());
    int64_t shared = 0;
    for (size_t i = 0; i < plan.size(); ++i) {
      LiveRequest& r = live_[i];
      r.input = plan[i].input_tokens;
      r.target_output = plan[i].output_tokens;
      r.cached = plan[i].cached_prefix_tokens;
      shared = std::max(shared, r.cached / s.block_size);
      trace_.requests[i].send_us = plan[i].send_us;
    }
    // The cached prefix is one shared prefix (a system prompt): held once.
    free_blocks_ = s.kv_cache_blocks - shared * s.kv_full_groups;
    size_t first = s.concurrency > 0 ? std::min(plan.size(), static_cast<size_t>(s.concurrency)) : plan.size();
    if (drained()) first = std::min(first, static_cast<size_t>(s.warmup_requests));
    while (issued_ < first) issue(trace_.requests[issued_].send_us);
    running_.reserve(plan.size());
    scheduled_.reserve(plan.size());
    step_.prefill.reserve(plan.size());
    step_.decode.reserve(plan.size());
    trace_.inter_token_gaps.reserve(1024);
  }

  /// The steps and work run so far (after run(), in all: moving the trace out leaves its numbers).
  SimulationReach reach() const { return {trace_.steps, work_}; }

  Expected<SimulationTrace> run(const ProgressFn& progress) {
    const size_t n = live_.size();
    double running_sum = 0, token_sum = 0;
    while (finished_ < n) {
      admit_arrivals();
      if (running_.empty() && waiting_.empty()) {
        if (arrived_ >= issued_) return internal_error("no request is in flight");
        now_ = std::max(now_, live_[arrived_].arrive_us);
        continue;
      }
      const int64_t tokens = schedule();
      if (s_.window_end_us >= 0 && trace_.window_end_waiting < 0 && now_ >= s_.window_end_us)
        trace_.window_end_waiting = static_cast<int64_t>(waiting_.size());  // left waiting once scheduled
      if (scheduled_.empty()) {
        if (running_.empty())
          return make_error("does_not_fit", "workload",
                            "A request needs more KV-cache blocks than the GPU holds; it can never be scheduled.");
        return internal_error("a step scheduled nothing");
      }
      auto times = pricer_->price(step_);
      if (!times) return times.error();
      const StepTimes& t = times.value();
      const double hw = t.prefill_us + t.decode_us;
      const double prefill_part_us = hw > 0 ? t.total_us * (t.prefill_us / hw) : 0;
      const double decode_part_us = hw > 0 ? t.total_us * (t.decode_us / hw) : t.total_us;
      trace_.prefill_gpu_us += prefill_part_us;
      trace_.decode_gpu_us += decode_part_us;
      trace_.busy_us += t.total_us;
      const size_t warmup = static_cast<size_t>(s_.warmup_requests);
      const double step_start = now_;
      now_ += t.total_us;
      const bool in_window = s_.window_end_us >= 0
                                 ? now_ > s_.window_start_us && now_ <= s_.window_end_us
                                 : warmup > 0 && issued_ > warmup && step_start >= trace_.requests[warmup].send_us;
      if (in_window) {
        trace_.window_prefill_gpu_us += prefill_part_us;
        trace_.window_decode_gpu_us += decode_part_us;
      }
      if (in_window && s_.window_end_us >= 0 && !waiting_.empty()) trace_.window_queued_us += t.total_us;
      const bool after_start = s_.window_end_us >= 0 && now_ > s_.window_start_us;
      if (after_start) {
        trace_.saturated_prefill_gpu_us += prefill_part_us;
        trace_.saturated_decode_gpu_us += decode_part_us;
      }
      running_sum += static_cast<double>(running_.size());
      token_sum += static_cast<double>(tokens);
      const int64_t sampled = finish_step(step_start);
      if (in_window && s_.window_end_us >= 0) trace_.window_output_tokens += sampled;
      if (after_start) trace_.saturated_output_tokens += sampled;
      work_ += serve_work_units(1, static_cast<double>(scheduled_.size()));
      if (++trace_.steps > s_.max_steps || (s_.max_work > 0 && work_ > s_.max_work))
        return make_error("too_large", "workload",
                          "The simulation exceeds " + std::to_string(s_.max_steps) + " engine steps or " +
                              std::to_string(static_cast<int64_t>(s_.max_work)) +
                              " units of work; use fewer or shorter requests.");
      // Progress every 512 steps and every 20,000 units of work (~15 ms natively, so cancel
      // answers quickly whatever the batch): the larger of the requests finished and the
      // work done over its estimate.
      if (progress && (trace_.steps % 512 == 0 || work_ >= next_report_)) {
        next_report_ = work_ + kWorkPerReport;
        const double by_work = s_.work_estimate > 0 ? std::min(0.99, work_ / s_.work_estimate) : 0;
        if (!progress(std::max(static_cast<double>(finished_) / static_cast<double>(n), by_work)))
          return make_error("cancelled", "", "The simulation was cancelled.");
      }
    }
    trace_.end_us = now_;
    trace_.work = work_;
    if (trace_.steps > 0) {
      trace_.mean_running = running_sum / static_cast<double>(trace_.steps);
      trace_.mean_step_tokens = token_sum / static_cast<double>(trace_.steps);
    }
    return std::move(trace_);
  }

 private:
  static Error internal_error(const std::string& what) {
    return make_error("internal", "workload", "The scheduler simulation stalled (" + what + ").");
  }

  /// A closed loop whose warm-up is a phase of its own (SimulationSettings::warmup_drain).
  bool drained() const { return s_.concurrency > 0 && s_.warmup_drain && s_.warmup_requests > 0; }

  /// Closed loop: request `index` has just finished, so its client sends its next request,
  /// unless the warm-up is drained: then the clients that finish their warm-up wait, and
  /// the last warm-up request to finish starts the measured requests, all clients at once.
  void client_next(size_t index) {
    const size_t warmup = static_cast<size_t>(s_.warmup_requests);
    if (!drained() || index >= warmup) {
      if (issued_ < live_.size()) issue(now_);
      return;
    }
    if (++warmup_finished_ < warmup) {
      if (issued_ < warmup) issue(now_);  // the warm-up phase goes on
      return;
    }
    const size_t clients = std::min(live_.size() - issued_, static_cast<size_t>(s_.concurrency));
    for (size_t i = 0; i < clients; ++i) issue(now_);
  }

  /// The next request is sent at `send_us`; the API server handles requests one
  /// at a time, `api_overhead_us` each, in the order they were sent.
  void issue(double send_us) {
    trace_.requests[issued_].send_us = send_us;
    api_free_us_ = std::max(api_free_us_, send_us) + s_.api_overhead_us;
    live_[issued_++].arrive_us = api_free_us_;
  }

  void admit_arrivals() {
    while (arrived_ < issued_ && live_[arrived_].arrive_us <= now_) {
      LiveRequest& r = live_[arrived_];
      r.phase = Phase::kWaiting;
      r.computed = r.cached;
      waiting_.push_back(arrived_++);
    }
  }

  bool allocate(LiveRequest& r, int64_t new_tokens) {
    const int64_t tokens = r.computed + new_tokens;
    // Without sliding windows a request's blocks only grow, so tokens that fit in
    // the blocks it holds need none (most decode steps): no division.
    if (tokens <= r.covered) return true;
    if (new_tokens == 1 && tokens <= r.decode_until && r.blocks == r.decode_blocks) return true;
    // Negative when a sliding window moved past blocks: they are freed.
    const int64_t need = request_kv_blocks(s_, tokens, r.cached, new_tokens) - r.blocks;
    if (need > free_blocks_) return false;
    free_blocks_ -= need, r.blocks += need;
    const int64_t block_end = (tokens + s_.block_size - 1) / s_.block_size * s_.block_size;
    if (s_.kv_sliding_groups == 0) {
      r.covered = block_end;
    } else if (new_tokens == 1) {  // request_kv_blocks of a decode depends on the block count only
      r.decode_until = block_end, r.decode_blocks = r.blocks;
    }
    trace_.peak_kv_blocks_used = std::max(trace_.peak_kv_blocks_used, s_.kv_cache_blocks - free_blocks_);
    return true;
  }

  void release(LiveRequest& r) { free_blocks_ += r.blocks, r.blocks = 0, r.covered = 0, r.decode_blocks = -1; }

  /// Preempts the most recently admitted running request (vLLM's FCFS policy).
  size_t preempt_last() {
    const size_t victim = running_.back();
    running_.pop_back();
    LiveRequest& v = live_[victim];
    release(v);
    v.computed = v.cached;  // recompute: prompt and generated tokens again
    v.phase = Phase::kWaiting;
    waiting_.push_front(victim);
    ++trace_.preemptions;
    ++trace_.requests[victim].preemptions;
    return victim;
  }

  void add_to_step(size_t index, int64_t tokens) {
    scheduled_.push_back({index, tokens});
    const LiveRequest& r = live_[index];
    const bool decode = tokens == 1 && r.generated > 0 && r.computed == r.input + r.generated - 1;
    if (decode) {  // fields stored one by one: a 16-byte copy through the stack stalls on store forwarding
      DecodeRequest& q = step_.decode.emplace_back();
      q.progress_index = r.computed;
    } else {
      PrefillRequest& q = step_.prefill.emplace_back();
      q.progress_index = r.computed, q.new_tokens = tokens;
    }
  }

  /// Builds the next step; returns the number of tokens scheduled.
  int64_t schedule() {
    scheduled_.clear();
    step_.prefill.clear();
    step_.decode.clear();
    int64_t budget = s_.max_num_batched_tokens;
    bool preempted = false;
    for (size_t i = 0; i < running_.size() && budget > 0;) {
      const size_t index = running_[i];
      LiveRequest& r = live_[index];
      const int64_t tokens = std::min(r.input + r.generated - r.computed, budget);
      bool can_schedule = true;
      while (!allocate(r, tokens)) {
        preempted = true;
        if (preempt_last() == index) {
          can_schedule = false;
          break;
        }
      }
      if (!can_schedule) break;
      add_to_step(index, tokens);
      budget -= tokens;
      ++i;
    }
    if (!preempted) {
      while (!waiting_.empty() && budget > 0 && static_cast<int64_t>(running_.size()) < s_.max_num_seqs) {
        const size_t index = waiting_.front();
        LiveRequest& r = live_[index];
        const int64_t need = r.input + r.generated - r.computed;
        if (!s_.enable_chunked_prefill && need > budget) break;
        const int64_t tokens = std::min(need, budget);
        if (!allocate(r, tokens)) break;
        waiting_.pop_front();
        r.phase = Phase::kRunning;
        running_.push_back(index);
        add_to_step(index, tokens);
        budget -= tokens;
      }
    }
    trace_.peak_running = std::max(trace_.peak_running, static_cast<int64_t>(running_.size()));
    trace_.peak_waiting = std::max(trace_.peak_waiting, static_cast<int64_t>(waiting_.size()));
    return s_.max_num_batched_tokens - budget;
  }

  /// Applies the step that ran from `start_us` to now: tokens computed,
  /// tokens sampled, requests finished, the next closed-loop requests sent.
  /// Returns the number of tokens sampled.
  int64_t finish_step(double start_us) {
    int64_t sampled = 0;
    int64_t regular_gaps = 0;  // tokens whose previous token came at the end of the last step
    const size_t warmup = static_cast<size_t>(s_.warmup_requests);
    bool any_finished = false;
    for (const Scheduled& s : scheduled_) {
      LiveRequest& r = live_[s.request];
      r.computed += s.tokens;
      if (r.computed < r.input + r.generated) continue;  // a prefill chunk: nothing sampled yet
      RequestTimeline& out = trace_.requests[s.request];
      ++r.generated;
      ++sampled;
      if (r.generated == 1) {
        out.first_token_us = now_;
      } else if (s.request < warmup) {
        // a warm-up request: its gaps are left out of the inter-token latencies
      } else if (r.last_token_us == start_us) {
        ++regular_gaps;
      } else {
        trace_.inter_token_gaps.push_back({now_ - r.last_token_us, 1});
      }
      r.last_token_us = now_;
      if (r.generated < r.target_output) continue;
      out.last_token_us = now_;
      out.output_tokens = r.generated;
      release(r);
      r.phase = Phase::kFinished;
      any_finished = true;
      ++finished_;
      if (s_.concurrency > 0) client_next(s.request);  // closed loop: the client sends its next request
    }
    if (regular_gaps > 0) trace_.inter_token_gaps.push_back({now_ - start_us, regular_gaps});
    if (any_finished)
      running_.erase(std::remove_if(running_.begin(), running_.end(),
                                    [this](size_t i) { return live_[i].phase == Phase::kFinished; }),
                     running_.end());
    return sampled;
  }

  const SimulationSettings& s_;
  StepPricer* pricer_;
  std::vector<LiveRequest> live_;
  IndexQueue waiting_;
  std::vector<size_t> running_;
  std::vector<Scheduled> scheduled_;
  Step step_;
  SimulationTrace trace_;
  int64_t free_blocks_ = 0;
  size_t issued_ = 0, arrived_ = 0, finished_ = 0;
  size_t warmup_finished_ = 0;  ///< warm-up requests finished (drained warm-up)
  double now_ = 0;
  double api_free_us_ = 0;                          ///< when the API server is done with the requests sent so far
  double work_ = 0, next_report_ = kWorkPerReport;  ///< serve_work_units so far; the next progress report's
  static constexpr double kWorkPerReport = 20000;
};

}  // namespace

int64_t request_kv_blocks(const SimulationSettings& s, int64_t tokens, int64_t cached, int64_t fresh) {
  const int64_t b = s.block_size, all = (tokens + b - 1) / b;
  int64_t blocks = s.kv_full_groups * (all - cached / b);
  if (s.kv_sliding_groups > 0)  // the window before the fresh tokens, and theirs
    blocks += s.kv_sliding_groups * std::min(all, (s.window_tokens - 1 + std::min(fresh, tokens) + b - 1) / b + 1);
  if (tokens > 0) blocks += s.kv_state_groups;  // one state block per linear group, whatever the length
  return blocks;
}

Expected<SimulationTrace> simulate(const std::vector<PlannedRequest>& plan, const SimulationSettings& settings,
                                   StepPricer* pricer, const ProgressFn& progress, SimulationReach* reached) {
  if (plan.empty()) return SimulationTrace{};
  if (settings.block_size < 1 || settings.max_num_batched_tokens < 1 || settings.max_num_seqs < 1)
    return make_error("invalid_value", "engine", "The engine settings must be positive.");
  int64_t shared = 0, largest = 0;
  for (const PlannedRequest& r : plan) {
    shared = std::max(shared, r.cached_prefix_tokens / settings.block_size * settings.kv_full_groups);
    largest = std::max(largest, request_kv_blocks(settings, r.input_tokens + r.output_tokens, r.cached_prefix_tokens,
                                                  settings.max_num_batched_tokens));
  }
  if (largest > settings.kv_cache_blocks - shared)
    return make_error("does_not_fit", "workload.input_tokens",
                      "The longest request needs " + std::to_string(largest) + " KV-cache blocks but the cache holds " +
                          std::to_string(settings.kv_cache_blocks - shared) +
                          " (after the shared prefix); vLLM would refuse to start. Use shorter requests, a larger TP "
                          "or a GPU with more memory.");
  Simulation simulation(plan, settings, pricer);
  auto trace = simulation.run(progress);
  if (reached != nullptr) *reached = simulation.reach();
  return trace;
}

}  // namespace stepcalc
