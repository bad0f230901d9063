// stepcalc: the native command line over the core.
//   stepcalc price [--mode NAME] [FILE|-]    result JSON for a request (or an array)
//   stepcalc sweep AXIS V1,V2,... [FILE|-]   step times of variants of one request
//   stepcalc conformance FILE                check expected step times, "N passed, M failed"
//   stepcalc presets                         models, GPUs and modes
// Exit codes: 0 success, 1 conformance mismatches, 2 bad input or usage.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "api.h"
#include "conformance.h"
#include "input_limits.h"
#include "io/printable_text.h"
#include "io/result_json.h"

namespace {

constexpr const char* kUsage =
    "usage: stepcalc price [--mode NAME] [FILE|-]\n"
    "       stepcalc sweep AXIS V1,V2,... [FILE|-]   (AXIS: prefill_tokens, decode_batch, decode_kv, tp)\n"
    "       stepcalc conformance FILE\n"
    "       stepcalc presets\n"
    "       stepcalc version\n";

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

int fail(const stepcalc::Error& e) {
  std::cout << stepcalc::error_to_json(e) << "\n";
  std::cerr << "stepcalc: " << stepcalc::printable_text((e.path.empty() ? "" : e.path + ": ") + e.message) << " ["
            << e.code << "]\n";
  return 2;
}

int usage() {
  std::cerr << kUsage;
  return 2;
}

int cmd_price(const std::vector<std::string>& args) {
  std::string mode, file = "-";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--mode" && i + 1 < args.size())
      mode = args[++i];
    else if (args[i].rfind("--mode=", 0) == 0)
      mode = args[i].substr(7);
    else if (args[i].size() > 1 && args[i][0] == '-')
      return usage();
    else
      file = args[i];
  }
  std::string text;
  if (!read_input(file, &text)) return fail({"io_error", "", "Cannot read " + file + "."});
  auto priced = stepcalc::price_document(text, mode);
  if (!priced) return fail(priced.error());
  std::cout << priced->json << "\n";
  return priced->failures > 0 ? 2 : 0;
}

int cmd_sweep(const std::vector<std::string>& args) {
  if (args.size() < 2 || args.size() > 3) return usage();
  std::vector<double> values;
  std::stringstream list(args[1]);
  for (std::string item; std::getline(list, item, ',');) {
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0') return fail({"invalid_value", "values", "Sweep values must be numbers: " + item});
    values.push_back(v);
  }
  std::string text;
  const std::string file = args.size() == 3 ? args[2] : "-";
  if (!read_input(file, &text)) return fail({"io_error", "", "Cannot read " + file + "."});
  auto swept = stepcalc::sweep_json(text, args[0], values);
  if (!swept) return fail(swept.error());
  std::cout << swept.value() << "\n";
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
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "price") return cmd_price(args);
  if (command == "sweep") return cmd_sweep(args);
  if (command == "conformance") return cmd_conformance(args);
  if (command == "presets" && args.empty()) {
    std::cout << stepcalc::presets_json() << "\n";
    return 0;
  }
  if (command == "version" || command == "--version") {
    std::cout << "stepcalc " << stepcalc::version() << "\n";
    return 0;
  }
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  return usage();
}
