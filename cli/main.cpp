// SPDX-License-Identifier: Apache-2.0
// stepcalc: the native command line over the core.
//   stepcalc price [--mode NAME] [--detail full|summary] [FILE|-]
//                                            result JSON for a request (or an array)
//   stepcalc serve [--mode NAME] [FILE|-]    serving estimate of a request with a workload (or an array)
//   stepcalc plan [--threads N] [FILE|-]     deployment plan: the cheapest configuration meeting a latency target
//   stepcalc sweep AXIS V1,V2,... [FILE|-]   step times of variants of one request
//   stepcalc sweep2d AXIS_X X1,... AXIS_Y Y1,... [FILE|-]
//                                            a heat map's points as columns (summary)
//   stepcalc conformance FILE                check expected step times, "N passed, M failed"
//   stepcalc presets                         models, GPUs and modes
//   stepcalc catalogue                       modes, switches, parameters, axes, limits, GPUs
//   stepcalc resolve-model [FILE|-]          a preset name or config.json resolved, with notes
// Exit codes: 0 success, 1 conformance mismatches, 2 bad input or usage. Every error
// prints one line for people on stderr and its JSON object on stdout.
// Option anywhere: --kernels DIR, the measured kernel packs to load (default: the
// build's kernels directory, else kernels/ next to the executable; docs/KERNELS.md).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "api/api.h"
#include "api/catalogue.h"
#include "api/conformance.h"
#include "base/input_limits.h"
#include "io/result_json.h"
#include "json/printable_text.h"
#include "kernels/kernel_registry.h"

#ifndef STEPCALC_KERNELS_DIR
#define STEPCALC_KERNELS_DIR ""
#endif

namespace {

std::string usage_text() {
  std::string axes;
  for (const stepcalc::SweepAxis& a : stepcalc::sweep_axes()) axes += (axes.empty() ? "" : ", ") + std::string(a.name);
  return "usage: stepcalc [--kernels DIR] price [--mode NAME] [--detail full|summary] [FILE|-]\n"
         "       stepcalc [--kernels DIR] serve [--mode NAME] [FILE|-]   (a request with a \"workload\"; "
         "docs/SERVING.md)\n"
         "       stepcalc [--kernels DIR] plan [--threads N] [FILE|-]   (model, gpus, workload, slo; docs/PLAN.md;\n"
         "         N threads search the candidates, default the CPU's cores, the same answer for any N)\n"
         "       stepcalc sweep AXIS V1,V2,... [FILE|-]   (AXIS: " +
         axes +
         ")\n"
         "       stepcalc sweep2d AXIS_X X1,X2,... AXIS_Y Y1,Y2,... [FILE|-]\n"
         "       stepcalc conformance FILE\n"
         "       stepcalc presets\n"
         "       stepcalc catalogue\n"
         "       stepcalc resolve-model [FILE|-]          (a quoted preset name or a config.json)\n"
         "       stepcalc version\n";
}

/// Reads FILE or stdin ("-"), at most one byte past the document limit: the core
/// refuses anything longer, so reading on would only cost memory and time. False when
/// the file cannot be opened or a read fails (a directory: EISDIR), so that is an
/// io_error and not an empty document.
bool read_input(const std::string& name, std::string* out) {
  FILE* f = name == "-" ? stdin : std::fopen(name.c_str(), "rb");
  if (f == nullptr) return false;
  char buf[65536];
  size_t n;
  while (out->size() <= stepcalc::limits::kMaxDocumentBytes && (n = std::fread(buf, 1, sizeof buf, f)) > 0)
    out->append(buf, n);
  const bool failed = std::ferror(f) != 0;
  if (f != stdin) std::fclose(f);
  return !failed;
}

/// The one line for people on stderr: "stepcalc: PATH: message [code]" (plus `suffix`).
void say(const stepcalc::Error& e, const std::string& suffix = "") {
  std::cerr << "stepcalc: " << stepcalc::printable_text((e.path.empty() ? "" : e.path + ": ") + e.message) << " ["
            << e.code << "]" << suffix << "\n";
}

int fail(const stepcalc::Error& e) {
  std::cout << stepcalc::error_to_json(e) << "\n";
  say(e);
  return 2;
}

/// Reads the kernel packs of `dir` by name when a request first needs them
/// (KernelRegistry::set_pack_source): regular files only (a symlink is followed to
/// its target, which must be one too), at most limits::kMaxKernelPackBytes, checked
/// before reading. A file that is not there leaves its part unloaded.
stepcalc::PackSource kernel_dir_source(const std::string& dir) {
  return [dir](const std::string& file, std::vector<uint8_t>* bytes) -> stepcalc::Expected<bool> {
    namespace fs = std::filesystem;
    const fs::path path = fs::path(dir) / file;
    const std::string shown = stepcalc::printable_text(path.string());
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || status.type() == fs::file_type::not_found) return false;
    if (status.type() != fs::file_type::regular)
      return stepcalc::make_error("io_error", "kernels", "The kernel pack " + shown + " is not a regular file.");
    const uintmax_t size = fs::file_size(path, ec);
    if (ec) return stepcalc::make_error("io_error", "kernels", "Cannot read the kernel pack " + shown + ".");
    if (size > stepcalc::limits::kMaxKernelPackBytes)
      return stepcalc::make_error("too_large", "kernels",
                                  "The kernel pack " + shown + " is " + std::to_string(size) +
                                      " bytes, over the limit of " +
                                      std::to_string(stepcalc::limits::kMaxKernelPackBytes) + ".");
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return stepcalc::make_error("io_error", "kernels", "Cannot open the kernel pack " + shown + ".");
    bytes->resize(static_cast<size_t>(size));
    const size_t got = size == 0 ? 0 : std::fread(bytes->data(), 1, bytes->size(), f);
    std::fclose(f);
    if (got != size) return stepcalc::make_error("io_error", "kernels", "Cannot read the kernel pack " + shown + ".");
    return true;
  };
}

/// The default kernel directory: the build's (compiled in), else kernels/ beside the executable.
std::string default_kernel_dir(const char* argv0) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (std::strlen(STEPCALC_KERNELS_DIR) > 0 && fs::is_directory(STEPCALC_KERNELS_DIR, ec)) return STEPCALC_KERNELS_DIR;
  const fs::path beside = fs::path(argv0).parent_path() / "kernels";
  return fs::is_directory(beside, ec) ? beside.string() : "";
}

int usage() {
  std::cerr << usage_text();
  return 2;
}

/// price and serve: [--mode NAME] [FILE|-], a request object or an array of them.
int cmd_document(const std::vector<std::string>& args, const stepcalc::KernelRegistry& kernels, bool serve) {
  std::string mode, detail, file = "-";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--mode" && i + 1 < args.size())
      mode = args[++i];
    else if (args[i].rfind("--mode=", 0) == 0)
      mode = args[i].substr(7);
    else if (args[i] == "--detail" && i + 1 < args.size())
      detail = args[++i];
    else if (args[i].rfind("--detail=", 0) == 0)
      detail = args[i].substr(9);
    else if (args[i].size() > 1 && args[i][0] == '-')
      return usage();
    else
      file = args[i];
  }
  std::optional<stepcalc::Detail> level;
  if (detail == "summary")
    level = stepcalc::Detail::kSummary;
  else if (detail == "full")
    level = stepcalc::Detail::kFull;
  else if (!detail.empty())
    return fail({"invalid_value", "detail", "--detail must be full or summary."});
  std::string text;
  if (!read_input(file, &text)) return fail({"io_error", "", "Cannot read " + file + "."});
  auto priced =
      serve ? stepcalc::serve_document(text, mode, kernels) : stepcalc::price_document(text, mode, kernels, level);
  if (!priced) return fail(priced.error());
  std::cout << priced->json << "\n";
  if (priced->failures == 0) return 0;
  stepcalc::Error first = priced->first_failure;
  // A pricing error of an array element names its field, not the element: say which.
  const std::string element = "[" + std::to_string(priced->first_failure_index) + "]";
  const bool is_array = !priced->json.empty() && priced->json[0] == '[';
  if (is_array && first.path.rfind(element, 0) != 0)
    first.path = element + (first.path.empty() ? "" : "." + first.path);
  say(first, priced->failures > 1 ? " (and " + std::to_string(priced->failures - 1) + " more failed)" : "");
  return 2;
}

/// plan [--threads N] [FILE|-]: one plan request object (docs/PLAN.md), its candidates
/// searched on N threads (default: the CPU's cores, at most kMaxPlanThreads).
int cmd_plan(std::vector<std::string> args, const stepcalc::KernelRegistry& kernels) {
  constexpr int kMaxPlanThreads = 64;
  int threads =
      static_cast<int>(std::min<unsigned>(kMaxPlanThreads, std::max(1u, std::thread::hardware_concurrency())));
  if (args.size() >= 2 && args[0] == "--threads") {
    char* end = nullptr;
    const long n = std::strtol(args[1].c_str(), &end, 10);
    if (args[1].empty() || *end != '\0' || n < 1 || n > kMaxPlanThreads)
      return fail({"invalid_value", "--threads",
                   "--threads must be a whole number from 1 to " + std::to_string(kMaxPlanThreads) + "."});
    threads = static_cast<int>(n);
    args.erase(args.begin(), args.begin() + 2);
  }
  std::string file = "-";
  if (args.size() > 1) return usage();
  if (!args.empty()) {
    if (args[0].size() > 1 && args[0][0] == '-') return usage();
    file = args[0];
  }
  std::string text;
  if (!read_input(file, &text)) return fail({"io_error", "", "Cannot read " + file + "."});
  auto planned = stepcalc::plan_json(text, kernels, nullptr, threads);
  if (!planned) return fail(planned.error());
  std::cout << planned.value() << "\n";
  return 0;
}

/// "1,2,3" -> {1, 2, 3}; false (and `bad` the item) when an item is not a number.
bool parse_values(const std::string& text, std::vector<double>* values, std::string* bad) {
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0') return *bad = item, false;
    values->push_back(v);
  }
  return true;
}

int cmd_sweep(const std::vector<std::string>& args, const stepcalc::KernelRegistry& kernels) {
  if (args.size() < 2 || args.size() > 3) return usage();
  std::vector<double> values;
  std::string bad;
  if (!parse_values(args[1], &values, &bad))
    return fail({"invalid_value", "values", "Sweep values must be numbers: " + bad});
  std::string text;
  const std::string file = args.size() == 3 ? args[2] : "-";
  if (!read_input(file, &text)) return fail({"io_error", "", "Cannot read " + file + "."});
  auto swept = stepcalc::sweep_json(text, args[0], values, kernels);
  if (!swept) return fail(swept.error());
  std::cout << swept.value() << "\n";
  return 0;
}

int cmd_resolve_model(const std::vector<std::string>& args) {
  if (args.size() > 1) return usage();
  const std::string file = args.empty() ? "-" : args[0];
  std::string text;
  if (!read_input(file, &text)) return fail({"io_error", "", "Cannot read " + file + "."});
  auto resolved = stepcalc::resolve_model_json(text);
  if (!resolved) return fail(resolved.error());
  std::cout << resolved.value() << "\n";
  return 0;
}

int cmd_sweep2d(const std::vector<std::string>& args) {
  if (args.size() < 4 || args.size() > 5) return usage();
  std::vector<double> xs, ys;
  std::string bad;
  if (!parse_values(args[1], &xs, &bad))
    return fail({"invalid_value", "values_x", "Sweep values must be numbers: " + bad});
  if (!parse_values(args[3], &ys, &bad))
    return fail({"invalid_value", "values_y", "Sweep values must be numbers: " + bad});
  std::string text;
  const std::string file = args.size() == 5 ? args[4] : "-";
  if (!read_input(file, &text)) return fail({"io_error", "", "Cannot read " + file + "."});
  auto grid = stepcalc::sweep_2d(text, args[0], xs, args[2], ys);
  if (!grid) return fail(grid.error());
  std::cout << stepcalc::summary_columns_to_json(grid.value()) << "\n";
  return 0;
}

int cmd_conformance(const std::vector<std::string>& args) {
  if (args.size() != 1) return usage();
  std::string text;
  if (!read_input(args[0], &text)) return fail({"io_error", "", "Cannot read " + args[0] + "."});
  auto report = stepcalc::check_conformance(text);
  if (!report) return fail(report.error());
  // Ids and paths come from the file: escaped, one can never print a line of its own.
  for (const std::string& line : report->mismatches) std::cout << "MISMATCH " << stepcalc::printable_text(line) << "\n";
  std::cout << report->passed << " passed, " << report->failed << " failed\n";
  return report->failed > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  // --kernels DIR may stand anywhere; the rest is the command and its arguments.
  std::vector<std::string> all(argv + 1, argv + argc), rest;
  std::string kernel_dir;
  bool kernel_dir_given = false;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] == "--kernels" && i + 1 < all.size()) {
      kernel_dir = all[++i];
      kernel_dir_given = true;
    } else if (all[i].rfind("--kernels=", 0) == 0) {
      kernel_dir = all[i].substr(10);
      kernel_dir_given = true;
    } else {
      rest.push_back(all[i]);
    }
  }
  if (rest.empty()) return usage();
  const std::string command = rest[0];
  const std::vector<std::string> args(rest.begin() + 1, rest.end());
  if (command == "price" || command == "sweep" || command == "serve" || command == "plan") {
    stepcalc::KernelRegistry kernels;
    if (!kernel_dir_given) kernel_dir = default_kernel_dir(argv[0]);
    if (!kernel_dir.empty()) {
      std::error_code ec;
      if (!std::filesystem::is_directory(kernel_dir, ec))
        return fail(stepcalc::make_error(
            "io_error", "kernels",
            "The kernel directory " + stepcalc::printable_text(kernel_dir) + " is not a directory that can be read."));
      kernels.set_pack_source(kernel_dir_source(kernel_dir));
    }
    if (command == "sweep") return cmd_sweep(args, kernels);
    if (command == "plan") return cmd_plan(args, kernels);
    return cmd_document(args, kernels, command == "serve");
  }
  if (command == "sweep2d") return cmd_sweep2d(args);
  if (command == "conformance") return cmd_conformance(args);
  if (command == "presets" && args.empty()) {
    std::cout << stepcalc::presets_json() << "\n";
    return 0;
  }
  if (command == "catalogue" && args.empty()) {
    std::cout << stepcalc::catalogue_json() << "\n";
    return 0;
  }
  if (command == "resolve-model") return cmd_resolve_model(args);
  if (command == "version" || command == "--version") {
    std::cout << "stepcalc " << stepcalc::version() << "\n";
    return 0;
  }
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << usage_text();
    return 0;
  }
  return usage();
}
