// Line charts as SVG, written by the benches themselves (docs/PERFORMANCE.md shows them):
// one series per schedule, x on a log-2 axis (microbatches), y linear from 0.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace baton_app {

struct ChartSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x > 0
  int color = 0;        // index into a fixed palette; series with one color are one family
  bool dashed = false;  // e.g. predicted next to real
};

struct Chart {
  std::string title, x_label, y_label;
  std::vector<ChartSeries> series;
};

std::string render_chart_svg(const Chart& chart);

}  // namespace baton_app
