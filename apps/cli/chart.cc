#include "chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "xml_escape.h"

namespace baton_app {
namespace {

const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), value >= 100 || value == std::floor(value) ? "%.0f" : "%.1f",
                value);
  return text;
}

// A round step giving about five ticks up to `top`.
double tick_step(double top) {
  const double raw = top / 5;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= factor * power) return factor * power;
  }
  return 10 * power;
}

// Where the x axis is labelled: every `step` up to `right` on a linear axis; on a log axis,
// the measured x values themselves (message sizes, rank counts).
std::vector<double> x_ticks(const Chart& chart, double right, double step) {
  std::vector<double> xs;
  if (chart.linear_x) {
    for (double x = 0; x <= right + 1e-9; x += step) xs.push_back(x);
    return xs;
  }
  for (const auto& series : chart.series) {
    for (const auto& point : series.points) xs.push_back(point.first);
  }
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  return xs;
}

}  // namespace

std::string render_chart_svg(const Chart& chart) {
  const double width = 760, height = 400, left = 70, right = 250, top = 40, bottom = 50;
  double x_min = 1e300, x_max = 0, y_max = 0;
  for (const auto& series : chart.series) {
    for (const auto& point : series.points) {
      x_min = std::min(x_min, point.first);
      x_max = std::max(x_max, point.first);
      y_max = std::max(y_max, point.second);
    }
  }
  if (x_max <= 0) x_min = 1, x_max = 2;
  if (x_min >= x_max) x_max = x_min * 2;
  if (y_max <= 0) y_max = 1;
  const double step = tick_step(y_max * 1.05);
  const double y_top = std::ceil(y_max * 1.05 / step) * step;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const double x_step = tick_step(x_max * 1.05);
  const double x_right = std::ceil(x_max * 1.05 / x_step) * x_step;
  auto px = [&](double x) {
    if (chart.linear_x) return left + plot_w * x / x_right;
    return left +
           plot_w * (std::log2(x) - std::log2(x_min)) / (std::log2(x_max) - std::log2(x_min));
  };
  auto py = [&](double y) { return top + plot_h * (1 - y / y_top); };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"24\" font-size=\"14\" font-weight=\"bold\">"
      << escape_xml(chart.title) << "</text>\n";
  for (double y = 0; y <= y_top + 1e-9; y += step) {
    svg << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << py(y) << "\" y2=\""
        << py(y) << "\" stroke=\"#ddd\"/>\n"
        << "<text x=\"" << left - 6 << "\" y=\"" << py(y) + 4 << "\" text-anchor=\"end\">"
        << number(y) << "</text>\n";
  }
  for (double x : x_ticks(chart, x_right, x_step)) {
    svg << "<text x=\"" << px(x) << "\" y=\"" << top + plot_h + 18 << "\" text-anchor=\"middle\">"
        << number(x) << "</text>\n";
  }
  svg << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 10
      << "\" text-anchor=\"middle\">" << escape_xml(chart.x_label) << "</text>\n"
      << "<text transform=\"translate(16," << top + plot_h / 2
      << ") rotate(-90)\" text-anchor=\"middle\">" << escape_xml(chart.y_label) << "</text>\n"
      << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\""
      << plot_h << "\" fill=\"none\" stroke=\"#888\"/>\n";
  int legend = 0;
  for (const auto& series : chart.series) {
    const char* color = kPalette[static_cast<std::size_t>(series.color) % 8];
    const std::string dash = series.dashed ? " stroke-dasharray=\"6 4\"" : "";
    if (!series.points_only) {
      svg << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\"" << dash
          << " points=\"";
      for (const auto& point : series.points)
        svg << px(point.first) << "," << py(point.second) << " ";
      svg << "\"/>\n";
    }
    for (const auto& point : series.points) {
      svg << "<circle cx=\"" << px(point.first) << "\" cy=\"" << py(point.second) << "\" r=\""
          << (series.points_only ? 5 : 3) << "\" fill=\"" << color << "\"/>\n";
    }
    const double ly = top + 10 + 18 * legend++;
    svg << "<line x1=\"" << left + plot_w + 12 << "\" x2=\"" << left + plot_w + 36 << "\" y1=\""
        << ly << "\" y2=\"" << ly << "\" stroke=\"" << color << "\" stroke-width=\"2\"" << dash
        << "/>\n<text x=\"" << left + plot_w + 42 << "\" y=\"" << ly + 4 << "\">"
        << escape_xml(series.name) << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace baton_app
