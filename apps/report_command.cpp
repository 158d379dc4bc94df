// `coretrain report DIR`: the training report (train/report.h) of an existing output folder, written to
// DIR/training_report.html, from its trainer_state.json, all_results.json and ddp_timing.json. The same page
// `coretrain qa` writes at the end of training; this rebuilds it, e.g. for a run of an older build or one
// copied from another machine (a folder written by HF's Trainer works too, without the per-rank timing).
#include <cstdio>
#include <string>

#include "apps/command.h"
#include "core/error.h"
#include "train/report.h"

namespace {

int run_report(int argc, char** argv) {
  std::string dir, out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::puts(
          "usage: coretrain report OUTPUT_DIR [-o FILE]\n\n"
          "Writes OUTPUT_DIR/training_report.html (or FILE): a self-contained page with the loss, learning\n"
          "rate, gradient norm, eval metrics and throughput over steps, per-rank compute vs exposed\n"
          "communication, and a summary table, from the folder's trainer_state.json, all_results.json and\n"
          "ddp_timing.json.");
      return 0;
    }
    if (a == "-o" || a == "--output") {
      if (i + 1 >= argc) ct::fail(a, ": expects a file name");
      out = argv[++i];
    } else if (dir.empty()) {
      dir = a;
    } else {
      ct::fail("unexpected argument '", a, "' (usage: coretrain report OUTPUT_DIR [-o FILE])");
    }
  }
  if (dir.empty()) ct::fail("usage: coretrain report OUTPUT_DIR [-o FILE]");
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::string path;
  if (out.empty()) {
    path = ct::train::write_training_report(dir);
  } else {
    const std::string html = ct::train::training_report_html(dir);
    std::FILE* f = std::fopen(out.c_str(), "wb");
    if (!f || std::fwrite(html.data(), 1, html.size(), f) != html.size()) ct::fail(out, ": cannot write");
    std::fclose(f);
    path = out;
  }
  std::printf("%s\n", path.c_str());
  return 0;
}

}  // namespace

CT_COMMAND("report", "write the HTML training report of an output folder (coretrain report DIR)", run_report);
