// Line charts as SVG, written by the benches (docs/PERFORMANCE.md shows them) and for a run's
// curves (run_curves.h):
// one series per schedule, x on a log-2 axis (microbatches) or linear from 0, y linear from 0;
// a series may be points alone (a scatter).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace baton_app {

struct ChartSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x > 0
  int color = 0;             // index into a fixed palette; series with one color are one family
  bool dashed = false;       // e.g. predicted next to real
  bool points_only = false;  // markers, no line
};

struct Chart {
  std::string title, x_label, y_label;
  std::vector<ChartSeries> series;
  bool linear_x = false;  // x from 0 with round ticks, like y (default: log 2, a tick per x)
};

std::string render_chart_svg(const Chart& chart);

}  // namespace baton_app
