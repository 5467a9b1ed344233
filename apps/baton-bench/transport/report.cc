#include "report.h"

#include <cstdio>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "number_format.h"
#include "sizes.h"

namespace baton_app {

namespace {

std::string cell(const std::optional<double>& value, int digits) {
  return value ? fixed(*value, digits) : "n/a";
}

std::optional<double> ratio(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b || *b <= 0) return std::nullopt;
  return *a / *b;
}

std::optional<double> difference(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b) return std::nullopt;
  return *a - *b;
}

// Six significant digits: what the figures file carries and the JSON report shows.
std::string six_digits(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

std::string optional_text(const std::optional<double>& value) {
  return value ? six_digits(*value) : "-";
}

std::optional<double> optional_value(const std::string& text) {
  if (text == "-") return std::nullopt;
  return std::stod(text);
}

}  // namespace

std::string format_bench_table(const BenchReport& report) {
  std::ostringstream out;
  out << "transport " << report.transport << " " << report.plugin_version << " ("
      << report.plugin_path << ")\n";
  if (report.reference.empty()) {
    out << "reference: unavailable: " << report.reference_unavailable << "\n";
  } else {
    out << "reference: " << report.reference << "\n";
  }
  out << "bandwidth: windowed stream of sends (median of " << report.repeats
      << " rounds); latency: half round trip of a ping-pong (median)\n\n";

  const std::vector<std::string> header = {"size",       "iters",     "GB/s",
                                           "ref GB/s",   "bw ratio",  "lat us",
                                           "ref lat us", "lat ratio", "lat diff us"};
  std::vector<std::vector<std::string>> rows;
  for (const SizeFigures& size : report.sizes) {
    const auto bw_ratio = ratio(size.gbps, size.reference_gbps);
    const auto lat_ratio = ratio(size.latency_us, size.reference_latency_us);
    const auto lat_diff = difference(size.latency_us, size.reference_latency_us);
    rows.push_back({format_message_size(size.bytes), std::to_string(size.iterations),
                    cell(size.gbps, 3), cell(size.reference_gbps, 3), cell(bw_ratio, 2),
                    cell(size.latency_us, 1), cell(size.reference_latency_us, 1),
                    cell(lat_ratio, 2),
                    lat_diff ? (*lat_diff >= 0 ? "+" : "") + fixed(*lat_diff, 1) : "n/a"});
  }
  std::vector<std::size_t> widths;
  for (const std::string& title : header) widths.push_back(title.size());
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      out << (i ? "  " : "") << std::right << std::setw(static_cast<int>(widths[i])) << row[i];
    }
    out << "\n";
  };
  print_row(header);
  for (const auto& row : rows) print_row(row);
  out << "\nratios: plugin / reference (bandwidth: higher is better; latency: lower is better)\n";
  return out.str();
}

std::string format_bench_json(const BenchReport& report) {
  const auto number = [](const std::optional<double>& value) {
    return value ? nlohmann::ordered_json(std::stod(six_digits(*value))) : nullptr;
  };
  const auto text_or_null = [](const std::string& text) {
    return text.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(text);
  };
  // One object per size, one per line.
  std::string out = "[";
  for (std::size_t i = 0; i < report.sizes.size(); ++i) {
    const SizeFigures& size = report.sizes[i];
    const nlohmann::ordered_json figures = {
        {"transport", report.transport},
        {"size_bytes", size.bytes},
        {"iterations", size.iterations},
        {"window", size.window},
        {"repeats", report.repeats},
        {"gbps", number(size.gbps)},
        {"latency_us", number(size.latency_us)},
        {"reference_gbps", number(size.reference_gbps)},
        {"reference_latency_us", number(size.reference_latency_us)},
        {"reference", text_or_null(report.reference)},
        {"reference_unavailable",
         report.reference.empty() ? text_or_null(report.reference_unavailable) : nullptr}};
    out += (i ? ",\n " : "\n ") + figures.dump();
  }
  return out + "\n]\n";
}

std::string serialize_figures(const std::vector<SizeFigures>& sizes) {
  std::ostringstream out;
  for (const SizeFigures& size : sizes) {
    out << size.bytes << " " << size.iterations << " " << size.window << " "
        << optional_text(size.gbps) << " " << optional_text(size.latency_us) << " "
        << optional_text(size.reference_gbps) << " " << optional_text(size.reference_latency_us)
        << "\n";
  }
  return out.str();
}

std::vector<SizeFigures> parse_figures(const std::string& text) {
  std::vector<SizeFigures> sizes;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    SizeFigures size;
    std::string gbps, latency, reference_gbps, reference_latency;
    if (!(fields >> size.bytes >> size.iterations >> size.window >> gbps >> latency >>
          reference_gbps >> reference_latency)) {
      throw baton::Error("bench: the measuring rank wrote an unreadable line: '" + line + "'");
    }
    try {
      size.gbps = optional_value(gbps);
      size.latency_us = optional_value(latency);
      size.reference_gbps = optional_value(reference_gbps);
      size.reference_latency_us = optional_value(reference_latency);
    } catch (const std::exception&) {
      throw baton::Error("bench: the measuring rank wrote an unreadable line: '" + line + "'");
    }
    sizes.push_back(size);
  }
  return sizes;
}

}  // namespace baton_app
