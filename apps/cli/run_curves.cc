#include "run_curves.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "baton/files.h"
#include "chart.h"

namespace baton_app {
namespace {

// The series' values scaled by a power of ten that brings the largest to [1, 10): the charts
// print their ticks with one decimal at most. Returns the label's suffix (" (x 1e-3)").
std::string scale_for_ticks(std::vector<ChartSeries>* series) {
  double largest = 0;
  for (const auto& one : *series) {
    for (const auto& point : one.points) largest = std::max(largest, std::fabs(point.second));
  }
  if (largest <= 0 || (largest >= 1 && largest < 1000)) return "";
  const int power = static_cast<int>(std::floor(std::log10(largest)));
  const double factor = std::pow(10.0, -power);
  for (auto& one : *series) {
    for (auto& point : one.points) point.second *= factor;
  }
  char text[32];
  std::snprintf(text, sizeof(text), " (x 1e%d)", power);
  return text;
}

// One chart as an element placed `y` pixels down the page.
std::string placed(const std::string& svg, int y) {
  const std::string tag = "<svg ";
  const auto at = svg.find(tag);
  if (at == std::string::npos) return svg;
  return svg.substr(0, at) + "<svg y=\"" + std::to_string(y) + "\" " + svg.substr(at + tag.size());
}

}  // namespace

std::string render_run_curves(const std::string& metrics_jsonl, const std::string& title) {
  ChartSeries loss{"loss", {}, 0}, eval_loss{"eval loss", {}, 1}, lr{"lr", {}, 2},
      norm{"grad norm", {}, 3};
  std::istringstream lines(metrics_jsonl);
  int steps = 0;
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    if (!record.is_object() || !record.contains("step") || !record["step"].is_number()) continue;
    const double step = record["step"].get<double>();
    ++steps;
    auto add = [&](const char* key, ChartSeries& series) {
      if (record.contains(key) && record[key].is_number()) {
        series.points.push_back({step, record[key].get<double>()});
      }
    };
    add("loss", loss);
    add("eval_loss", eval_loss);
    add("lr", lr);
    add("grad_norm", norm);
  }
  if (steps == 0) throw baton::Error("the metrics hold no step yet");
  eval_loss.points_only = eval_loss.points.size() < 2;
  std::vector<Chart> charts;
  Chart losses{title + ": loss", "step", "loss", {}, true};
  for (ChartSeries* series : {&loss, &eval_loss}) {
    if (!series->points.empty()) losses.series.push_back(*series);
  }
  charts.push_back(losses);
  if (!lr.points.empty()) {
    Chart chart{"learning rate", "step", "lr", {lr}, true};
    chart.y_label += scale_for_ticks(&chart.series);
    charts.push_back(chart);
  }
  if (!norm.points.empty()) {
    Chart chart{"gradient norm (before clipping)", "step", "norm", {norm}, true};
    chart.y_label += scale_for_ticks(&chart.series);
    charts.push_back(chart);
  }
  const int height = 400;  // render_chart_svg's
  std::ostringstream page;
  page << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"760\" height=\""
       << height * static_cast<int>(charts.size()) << "\">\n";
  for (std::size_t i = 0; i < charts.size(); ++i) {
    page << placed(render_chart_svg(charts[i]), height * static_cast<int>(i));
  }
  page << "</svg>\n";
  return page.str();
}

std::string write_run_curves(const std::string& run_dir) {
  const std::string metrics = run_dir + "/metrics.jsonl";
  std::string text;
  try {
    text = baton::read_file(metrics, "metrics file");
  } catch (const baton::Error& error) {
    throw baton::Error(std::string(error.what()) +
                       "; give the folder of a run (<run.output_dir>/<run.name>), which a run "
                       "makes at its first step");
  }
  std::string title = run_dir;
  while (!title.empty() && title.back() == '/') title.pop_back();
  title = title.substr(title.find_last_of('/') + 1);
  std::string svg;
  try {
    svg = render_run_curves(text, title);
  } catch (const baton::Error& error) {
    throw baton::Error("'" + metrics + "': " + error.what());
  }
  const std::string path = run_dir + "/curves.svg";
  baton::write_file_atomically(path, svg);
  return path;
}

}  // namespace baton_app
