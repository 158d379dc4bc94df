#include "train/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/fs.h"
#include "train/checkpoint.h"
#include "train/model_card.h"
#include "train/trainer_state.h"

namespace ct::train {
namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string num(double v, int sig = 4) {
  if (!std::isfinite(v)) return "n/a";
  char b[64];
  std::snprintf(b, sizeof b, "%.*g", sig, v);
  return b;
}

std::string fixed(double v, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

struct Series {
  std::string name, label, color;
  std::vector<std::pair<double, double>> pts;
};

// Tick positions at 1/2/5 x 10^k covering [lo, hi].
std::vector<double> ticks(double lo, double hi, int want = 5) {
  const double span = hi - lo;
  const double raw = span / want;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  return t;
}

constexpr int kW = 660, kH = 316, kL = 76, kR = 20, kT = 50, kB = 52;

void range_of(const std::vector<Series>& series, double* x0, double* x1, double* y0, double* y1,
              bool y_from_zero) {
  *x0 = *y0 = std::numeric_limits<double>::infinity();
  *x1 = *y1 = -std::numeric_limits<double>::infinity();
  for (const auto& s : series)
    for (auto [x, y] : s.pts) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      *x0 = std::min(*x0, x), *x1 = std::max(*x1, x);
      *y0 = std::min(*y0, y), *y1 = std::max(*y1, y);
    }
  if (!std::isfinite(*x0)) *x0 = 0, *x1 = 1, *y0 = 0, *y1 = 1;
  if (y_from_zero) *y0 = std::min(*y0, 0.0);
  if (*x1 - *x0 <= 0) *x0 -= 1, *x1 += 1;
  if (*y1 - *y0 <= 0) {
    const double pad = std::abs(*y0) > 0 ? std::abs(*y0) * 0.1 : 1.0;
    *y0 -= pad, *y1 += pad;
  } else {
    const double pad = (*y1 - *y0) * 0.05;
    *y1 += pad;
    if (!(y_from_zero && *y0 == 0)) *y0 -= pad;
  }
}

std::string axes(const std::string& title, const std::string& xlabel, const std::string& ylabel, double x0,
                 double x1, double y0, double y1, bool x_ticks = true) {
  const int pw = kW - kL - kR, ph = kH - kT - kB;
  auto X = [&](double x) { return kL + (x - x0) / (x1 - x0) * pw; };
  auto Y = [&](double y) { return kT + ph - (y - y0) / (y1 - y0) * ph; };
  std::string s = str("<svg class=\"plot\" width=\"", kW, "\" height=\"", kH, "\" viewBox=\"0 0 ", kW, " ",
                      kH, "\" role=\"img\" aria-label=\"", esc(title), "\">\n");
  s += str("<text x=\"", kW / 2, "\" y=\"20\" text-anchor=\"middle\" class=\"title\">", esc(title),
           "</text>\n");
  s += str("<rect x=\"", kL, "\" y=\"", kT, "\" width=\"", pw, "\" height=\"", ph,
           "\" fill=\"none\" stroke=\"#888\"/>\n");
  for (double v : ticks(y0, y1)) {
    const double y = Y(v);
    s += str("<line x1=\"", kL, "\" x2=\"", kL + pw, "\" y1=\"", fixed(y, 1), "\" y2=\"", fixed(y, 1),
             "\" stroke=\"#e4e4e4\"/>");
    s += str("<text x=\"", kL - 6, "\" y=\"", fixed(y + 4, 1), "\" text-anchor=\"end\" class=\"tick\">",
             num(v), "</text>\n");
  }
  if (x_ticks)
    for (double v : ticks(x0, x1, 6)) {
      const double x = X(v);
      s += str("<line x1=\"", fixed(x, 1), "\" x2=\"", fixed(x, 1), "\" y1=\"", kT + ph, "\" y2=\"",
               kT + ph + 5, "\" stroke=\"#888\"/>");
      s += str("<text x=\"", fixed(x, 1), "\" y=\"", kT + ph + 18,
               "\" text-anchor=\"middle\" class=\"tick\">", num(v, 6), "</text>\n");
    }
  s += str("<text x=\"", kL + pw / 2, "\" y=\"", kH - 10, "\" text-anchor=\"middle\" class=\"label\">",
           esc(xlabel), "</text>\n");
  s += str("<text transform=\"translate(16 ", kT + ph / 2,
           ") rotate(-90)\" text-anchor=\"middle\" class=\"label\">", esc(ylabel), "</text>\n");
  return s;
}

std::string line_chart(const std::string& title, const std::string& xlabel, const std::string& ylabel,
                       const std::vector<Series>& series, bool y_from_zero = false) {
  double x0, x1, y0, y1;
  range_of(series, &x0, &x1, &y0, &y1, y_from_zero);
  const int pw = kW - kL - kR, ph = kH - kT - kB;
  auto X = [&](double x) { return kL + (x - x0) / (x1 - x0) * pw; };
  auto Y = [&](double y) { return kT + ph - (y - y0) / (y1 - y0) * ph; };
  std::string s = axes(title, xlabel, ylabel, x0, x1, y0, y1);
  int li = 0;
  for (const auto& se : series) {
    std::string pts;
    for (auto [x, y] : se.pts) {
      if (!std::isfinite(y)) continue;
      pts += (pts.empty() ? "" : " ") + fixed(X(x), 2) + "," + fixed(Y(y), 2);
    }
    s += str("<polyline data-series=\"", esc(se.name), "\" fill=\"none\" stroke=\"", se.color,
             "\" stroke-width=\"1.6\" points=\"", pts, "\"/>\n");
    if (se.pts.size() <= 60)
      for (auto [x, y] : se.pts)
        if (std::isfinite(y))
          s += str("<circle cx=\"", fixed(X(x), 2), "\" cy=\"", fixed(Y(y), 2), "\" r=\"2.6\" fill=\"",
                   se.color, "\"><title>", esc(se.label), " at step ", num(x, 8), ": ", num(y, 6),
                   "</title></circle>");
    if (series.size() > 1) {
      const int lx = kL + 150 * li, ly = kT - 10;
      s += str("<line x1=\"", lx, "\" x2=\"", lx + 18, "\" y1=\"", ly - 4, "\" y2=\"", ly - 4, "\" stroke=\"",
               se.color, "\" stroke-width=\"2\"/><text x=\"", lx + 22, "\" y=\"", ly, "\" class=\"tick\">",
               esc(se.label), "</text>\n");
    }
    ++li;
  }
  return s + "</svg>\n";
}

struct RankBar {
  int rank = 0;
  double compute = 0, comm = 0, other = 0;
};

std::string rank_bars(const std::vector<RankBar>& bars) {
  double top = 0;
  for (const auto& b : bars) top = std::max(top, b.compute + b.comm + b.other);
  if (top <= 0) top = 1;
  top *= 1.08;
  const int pw = kW - kL - kR, ph = kH - kT - kB;
  std::string s = axes("Time per rank: compute vs exposed gradient communication", "rank", "seconds", 0,
                       static_cast<double>(bars.size()), 0, top, /*x_ticks=*/false);
  auto Y = [&](double y) { return kT + ph - y / top * ph; };
  const double slot = static_cast<double>(pw) / static_cast<double>(std::max<size_t>(bars.size(), 1));
  const double bw = std::min(60.0, slot * 0.6);
  const char* colors[] = {"#4477aa", "#ee6677", "#bbbbbb"};
  const char* names[] = {"compute", "comm_exposed", "eval_save"};
  const char* labels[] = {"compute", "exposed communication", "eval + checkpoints"};
  for (size_t i = 0; i < bars.size(); ++i) {
    const double cx = kL + slot * (static_cast<double>(i) + 0.5);
    double base = 0;
    const double parts[] = {bars[i].compute, bars[i].comm, bars[i].other};
    for (int p = 0; p < 3; ++p) {
      const double h = Y(base) - Y(base + parts[p]);
      s += str("<rect data-rank=\"", bars[i].rank, "\" data-part=\"", names[p], "\" x=\"",
               fixed(cx - bw / 2, 2), "\" y=\"", fixed(Y(base + parts[p]), 2), "\" width=\"", fixed(bw, 2),
               "\" height=\"", fixed(std::max(h, 0.0), 2), "\" fill=\"", colors[p], "\"><title>rank ",
               bars[i].rank, " ", labels[p], ": ", num(parts[p], 4), " s</title></rect>");
      base += parts[p];
    }
    s += str("<text x=\"", fixed(cx, 1), "\" y=\"", kT + ph + 18, "\" text-anchor=\"middle\" class=\"tick\">",
             bars[i].rank, "</text>\n");
  }
  for (int p = 0; p < 3; ++p) {
    const int lx = kL + 170 * p, ly = kT - 10;
    s += str("<rect x=\"", lx, "\" y=\"", ly - 9, "\" width=\"12\" height=\"10\" fill=\"", colors[p],
             "\"/><text x=\"", lx + 16, "\" y=\"", ly, "\" class=\"tick\">", labels[p], "</text>\n");
  }
  return s + "</svg>\n";
}

nlohmann::json read_optional(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return nlohmann::json();
  try {
    return nlohmann::json::parse(fs::read_file(path));
  } catch (const std::exception&) {
    return nlohmann::json();
  }
}

double get(const nlohmann::json& j, const char* key, double dflt = std::nan("")) {
  if (j.is_object() && j.contains(key) && j[key].is_number()) return j[key].get<double>();
  return dflt;
}

}  // namespace

std::string training_report_html(const std::string& output_dir) {
  const std::string state_path = output_dir + "/" + kTrainerStateFile;
  std::error_code ec;
  if (!std::filesystem::exists(state_path, ec))
    fail(output_dir, ": no ", kTrainerStateFile, " (not a coretrain qa / HF Trainer output folder?)");
  const nlohmann::json state = read_json(state_path);
  const nlohmann::json args = read_optional(output_dir + "/" + kTrainingArgsFile);
  const nlohmann::json results = read_optional(output_dir + "/all_results.json");
  const nlohmann::json timing = read_optional(output_dir + "/" + kTimingFile);
  const nlohmann::json history = state.value("log_history", nlohmann::json::array());

  Series loss{"loss", "training loss", "#4477aa", {}}, lr{"learning_rate", "learning rate", "#228833", {}},
      gn{"grad_norm", "gradient norm", "#aa3377", {}};
  std::vector<Series> evals;
  const char* eval_colors[] = {"#ee6677", "#4477aa", "#228833", "#ccbb44", "#66ccee", "#aa3377"};
  nlohmann::json last_eval;
  for (const auto& e : history) {
    const double step = get(e, "step");
    if (e.contains("loss")) loss.pts.push_back({step, get(e, "loss")});
    if (e.contains("learning_rate")) lr.pts.push_back({step, get(e, "learning_rate")});
    if (e.contains("grad_norm")) gn.pts.push_back({step, get(e, "grad_norm")});
    bool is_eval = false;
    for (const auto& [k, v] : e.items()) {
      if (k.rfind("eval_", 0) != 0 || !v.is_number() || k == "eval_runtime" ||
          k == "eval_samples_per_second" || k == "eval_steps_per_second" || k == "eval_samples")
        continue;
      // Percent-scale metrics only (EM, F1, v2's HasAns/NoAns/best): counts like eval_total stay out.
      const std::string n = k.substr(5);
      if (n == "total" || n.find("_total") != std::string::npos || n.find("thresh") != std::string::npos)
        continue;
      is_eval = true;
      auto it = std::find_if(evals.begin(), evals.end(), [&](const Series& s) { return s.name == k; });
      if (it == evals.end()) {
        evals.push_back({k, n, eval_colors[evals.size() % 6], {}});
        it = evals.end() - 1;
      }
      it->pts.push_back({step, v.get<double>()});
    }
    if (is_eval) last_eval = e;
  }

  // Throughput per logging interval from rank 0's log times.
  Series tput{"samples_per_second", "samples/s", "#ee7733", {}};
  const double global_batch = get(timing, "global_batch");
  if (timing.is_object() && timing.contains("log_times") && std::isfinite(global_batch)) {
    double ps = get(timing, "start_step", 0), pt = 0;
    for (const auto& lt : timing["log_times"]) {
      const double s = lt.at(0).get<double>(), t = lt.at(1).get<double>();
      const double v = t > pt ? (s - ps) * global_batch / (t - pt) : std::nan("");
      tput.pts.push_back({s, v});
      ps = s, pt = t;
    }
  }
  std::vector<RankBar> bars;
  if (timing.is_object() && timing.contains("ranks"))
    for (const auto& r : timing["ranks"])
      bars.push_back({r.value("rank", 0), get(r, "compute_s", 0), get(r, "comm_exposed_s", 0),
                      get(r, "eval_save_s", 0)});

  // Summary.
  const int world = timing.is_object() ? timing.value("world_size", 1) : 1;
  int nodes = 0;
  for (const auto& r :
       timing.is_object() && timing.contains("ranks") ? timing["ranks"] : nlohmann::json::array())
    nodes = std::max(nodes, r.value("node", 0) + 1);
  std::vector<std::pair<std::string, std::string>> rows;
  auto row = [&](const std::string& k, const std::string& v) { rows.push_back({k, v}); };
  row("output_dir", output_dir);
  row("world size", str(world, " rank", world == 1 ? "" : "s",
                        nodes > 0 ? str(" on ", nodes, " node", nodes == 1 ? "" : "s") : ""));
  const double pdb = get(args, "per_device_train_batch_size"),
               acc = get(args, "gradient_accumulation_steps", 1);
  if (std::isfinite(global_batch))
    row("global batch",
        str(num(global_batch, 8), std::isfinite(pdb) ? str(" (per device ", num(pdb, 8), " x ", world,
                                                           " ranks x accumulation ", num(acc, 8), ")")
                                                     : ""));
  row("optimizer steps",
      str(state.value("global_step", int64_t{0}), " of ", state.value("max_steps", int64_t{0})));
  row("epochs", num(get(state, "epoch", 0), 4));
  const double runtime = get(results, "train_runtime"), sps = get(results, "train_samples_per_second");
  if (std::isfinite(runtime)) row("train runtime", num(runtime, 6) + " s");
  if (std::isfinite(sps))
    row("train samples/s", str(num(sps, 6), world > 1 ? str(" (", num(sps / world, 5), " per rank)") : ""));
  if (results.contains("train_loss")) row("train_loss (mean over steps)", num(get(results, "train_loss"), 5));
  if (!bars.empty()) {
    double comm = 0, rt = 0;
    for (const auto& r : timing["ranks"]) comm += get(r, "comm_exposed_s", 0), rt += get(r, "runtime_s", 0);
    if (rt > 0)
      row("exposed gradient communication",
          str(fixed(100.0 * comm / rt, 1), "% of the training time (mean over ranks)"));
  }
  const nlohmann::json& fin = results.is_object() && results.contains("eval_f1") ? results : last_eval;
  for (const char* k : {"eval_exact_match", "eval_exact", "eval_f1", "eval_HasAns_f1", "eval_NoAns_f1"})
    if (fin.is_object() && fin.contains(k)) row(str("final ", k + 5), fixed(get(fin, k), 2));

  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<title>Training report: " + esc(output_dir) + "</title>\n<style>\n";
  h +=
      "body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}"
      "h1{font-size:22px}h2{font-size:17px;margin-top:28px}"
      "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px "
      "10px;text-align:left;font-size:14px}"
      ".grid{display:flex;flex-wrap:wrap;gap:12px}.plot{background:#fff;border:1px solid #ddd}"
      ".title{font-size:14px;font-weight:bold}.tick{font-size:11px;fill:#444}.label{font-size:12px;fill:#222}"
      ".note{font-size:13px;color:#555;max-width:1340px}\n";
  h += "</style>\n</head>\n<body>\n";
  h += "<h1>Training report</h1>\n<p class=\"note\">coretrain " + std::string(kCoretrainVersion) + ", from " +
       esc(output_dir) + "/" + kTrainerStateFile + (timing.is_object() ? str(", ", kTimingFile) : "") +
       (results.is_object() ? ", all_results.json" : "") + ".</p>\n";
  h += "<h2>Summary</h2>\n<table id=\"summary\">\n";
  for (const auto& [k, v] : rows) h += "<tr><th>" + esc(k) + "</th><td>" + esc(v) + "</td></tr>\n";
  h += "</table>\n<h2>Training</h2>\n<div class=\"grid\">\n";
  if (!loss.pts.empty())
    h += line_chart("Training loss", "optimizer step", "loss (mean over the logging interval)", {loss});
  if (!lr.pts.empty()) h += line_chart("Learning rate", "optimizer step", "learning rate", {lr}, true);
  if (!gn.pts.empty())
    h += line_chart("Gradient norm (before clipping)", "optimizer step", "global L2 norm", {gn}, true);
  if (!tput.pts.empty())
    h += line_chart("Throughput per logging interval", "optimizer step", "samples/s (all ranks)", {tput},
                    true);
  h += "</div>\n";
  if (!evals.empty()) {
    h += "<h2>Evaluation</h2>\n<div class=\"grid\">\n";
    h += line_chart("Evaluation metrics", "optimizer step", "score (%)", evals);
    h += "</div>\n";
  }
  if (!bars.empty()) {
    h += "<h2>Data parallelism</h2>\n<div class=\"grid\">\n" + rank_bars(bars) + "</div>\n";
    h += "<p class=\"note\">Per rank, the training loop's wall time split into exposed communication (time "
         "spent waiting for gradient all-reduces after backward finished), evaluation and checkpoints inside "
         "the "
         "loop, and the rest (forward, backward, optimizer, the per-step loss all-reduce).</p>\n";
  }
  if (!tput.pts.empty())
    h += "<p class=\"note\">Throughput: optimizer steps x global batch / wall time between two logging steps "
         "(rank 0's clock); an interval that holds an evaluation or a checkpoint shows lower.</p>\n";
  h += "</body>\n</html>\n";
  return h;
}

std::string write_training_report(const std::string& output_dir) {
  const std::string path = output_dir + "/" + kReportFile;
  fs::write_file_atomic(path, training_report_html(output_dir));
  return path;
}

}  // namespace ct::train
