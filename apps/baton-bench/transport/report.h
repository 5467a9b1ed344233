// The figures of one `baton bench transport` run, and how they are printed (a table, or
// JSON: one object per message size) and handed from the measuring rank to the command.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace baton_app {

struct SizeFigures {
  std::size_t bytes = 0;
  int iterations = 0;                // round trips and streamed messages per round
  int window = 0;                    // stream: messages in flight
  std::optional<double> gbps;        // plugin, 1e9 bytes/s
  std::optional<double> latency_us;  // plugin, half a round trip
  std::optional<double> reference_gbps;
  std::optional<double> reference_latency_us;
};

struct BenchReport {
  std::string transport;       // plugin name
  std::string plugin_version;  // the plugin's own version
  std::string plugin_path;
  std::string reference;              // what the reference is; empty when there is none
  std::string reference_unavailable;  // why there is no reference (when `reference` is empty)
  int repeats = 0;
  std::vector<SizeFigures> sizes;
};

std::string format_bench_table(const BenchReport& report);
std::string format_bench_json(const BenchReport& report);

// The measuring rank writes its figures as text lines; the command reads them back.
std::string serialize_figures(const std::vector<SizeFigures>& sizes);
// Throws baton::Error when `text` is not what serialize_figures() wrote.
std::vector<SizeFigures> parse_figures(const std::string& text);

}  // namespace baton_app
