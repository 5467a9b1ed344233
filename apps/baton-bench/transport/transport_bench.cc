#include "transport_bench.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "baton/error.h"
#include "baton/plugin_loader.h"
#include "baton/suggest.h"
#include "command_line.h"
#include "method.h"
#include "perftest.h"
#include "process_group.h"
#include "report.h"
#include "scratch_folder.h"
#include "sizes.h"
#include "transport_rank.h"

namespace baton_app {
namespace {

const char* const kDefaultSizes = "1K,64K,1M,16M,64M";

// Bytes a ucx_perftest bandwidth run moves at least (see measure_perftest).
constexpr std::size_t kPerftestBytesPerRun = std::size_t{256} << 20;

// Each transfer's wait; the whole run is bounded by --timeout.
constexpr std::chrono::milliseconds kWaitTimeout(60000);

struct Reference {
  enum class Kind { kNone, kGloo, kPerftest } kind = Kind::kNone;
  std::string description;  // empty when kNone
  std::string unavailable;  // why, when kNone
  std::string program;      // ucx_perftest
};

Reference choose_reference(const std::string& transport, bool disabled) {
  Reference reference;
  if (disabled) {
    reference.unavailable = "disabled by --no-reference";
  } else if (transport == "gloo") {
#if BATON_BENCH_WITH_GLOO
    reference.kind = Reference::Kind::kGloo;
    reference.description =
        "raw gloo (tcp device on 127.0.0.1, unbound buffers), same method, same processes";
#else
    reference.unavailable = "this baton was built without gloo (BATON_WITH_GLOO=OFF)";
#endif
  } else if (transport == "ucx") {
    reference.program = find_ucx_perftest();
    if (reference.program.empty()) {
      reference.unavailable =
          "ucx_perftest is not on PATH (Debian package ucx-utils); no reference measured";
    } else {
      reference.kind = Reference::Kind::kPerftest;
      reference.description = reference.program +
                              " -t tag_lat (latency) and -t tag_bw (bandwidth), server and "
                              "client on 127.0.0.1, same UCX_* environment";
    }
  } else {
    reference.unavailable = "baton knows no reference library for transport '" + transport + "'";
  }
  return reference;
}

// Starts both ranks and waits for them; throws when either fails or the deadline passes.
std::vector<SizeFigures> run_ranks(RankJob job, const ScratchFolder& scratch,
                                   BenchClock::time_point deadline, int timeout_s) {
  job.parent = ::getpid();
  job.store = scratch.make_subfolder("store");
  job.figures = scratch.path() + "/figures.txt";
  ProcessGroup ranks;
  for (int rank = 0; rank < 2; ++rank) {
    job.rank = rank;
    std::vector<std::string> argv = {own_program()};
    const std::vector<std::string> words = rank_command_line(job);
    argv.insert(argv.end(), words.begin(), words.end());
    // Both ranks run here, as `baton launch` tells a transport (UCX keeps to loopback and
    // shared memory).
    ranks.spawn("rank " + std::to_string(rank), argv, std::string(),
                {"BATON_WORLD_ADDRESS=127.0.0.1", "BATON_LOCAL_RANKS=2"});
  }
  std::string failures;
  bool timed_out = false;
  for (const ProcessOutcome& outcome : ranks.wait_all(deadline, std::chrono::seconds(3))) {
    if (outcome.succeeded()) continue;
    failures += "\n  " + outcome.describe();
    timed_out = timed_out || outcome.timed_out;
  }
  if (timed_out) {
    throw baton::Error("bench transport did not finish within --timeout " +
                       std::to_string(timeout_s) + " s:" + failures +
                       "\nMeasure fewer or smaller sizes, fewer --iterations or --repeats, or "
                       "raise --timeout.");
  }
  if (!failures.empty()) {
    throw baton::Error("bench transport failed (the ranks' own messages are above):" + failures);
  }
  std::vector<SizeFigures> figures = parse_figures(read_child_output(job.figures));
  if (figures.size() != job.sizes.size()) {
    throw baton::Error("bench transport: rank 0 reported " + std::to_string(figures.size()) +
                       " of " + std::to_string(job.sizes.size()) + " sizes");
  }
  return figures;
}

// Median of `repeats` ucx_perftest runs of each test, per size. A failing run makes the
// reference unavailable, with the reason, instead of failing the bench.
void measure_perftest(BenchReport& report, const Reference& reference, int repeats,
                      const ScratchFolder& scratch, BenchClock::time_point deadline) {
  try {
    for (SizeFigures& size : report.sizes) {
      const SizePlan plan = plan_size(size.bytes, size.iterations);
      // ucx_perftest's overall bandwidth includes its own start-up, which dominates short
      // runs of small messages (1000 x 1 KiB: ~20x below its steady rate); tag_bw moves at
      // least ~256 MiB per run.
      const std::size_t volume_iterations =
          std::min<std::size_t>(1000000, kPerftestBytesPerRun / size.bytes);
      const int stream_iterations = std::max(plan.iterations, static_cast<int>(volume_iterations));
      std::vector<double> latencies, bandwidths;
      for (int round = 0; round < repeats; ++round) {
        PerftestRun run{reference.program, "tag_lat",   size.bytes,
                        plan.iterations,   plan.warmup, scratch.path()};
        latencies.push_back(run_ucx_perftest(run, deadline).latency_us);
        run.test = "tag_bw";
        run.iterations = stream_iterations;
        run.warmup = std::max(plan.warmup, stream_iterations / 10);
        bandwidths.push_back(run_ucx_perftest(run, deadline).gbps);
      }
      std::sort(latencies.begin(), latencies.end());
      std::sort(bandwidths.begin(), bandwidths.end());
      size.reference_latency_us = latencies[latencies.size() / 2];
      size.reference_gbps = bandwidths[bandwidths.size() / 2];
    }
  } catch (const baton::Error& error) {
    for (SizeFigures& size : report.sizes) {
      size.reference_gbps.reset();
      size.reference_latency_us.reset();
    }
    report.reference.clear();
    report.reference_unavailable = std::string("ucx_perftest failed: ") + error.what();
    std::cerr << "baton bench: warning: " << report.reference_unavailable << "\n";
  }
}

struct TransportBenchOptions {
  std::string transport;
  std::string sizes = kDefaultSizes;
  int iterations = 0;  // 0: chosen per size
  int repeats = 3;
  int timeout_s = 600;
  std::string format = "table";
  std::vector<std::string> params;
  std::vector<std::string> plugin_path;
  bool no_reference = false;
};

int run_transport_bench(const TransportBenchOptions& options) {
  const std::string& format = options.format;
  const std::string& name = options.transport;
  const std::vector<std::size_t> sizes = parse_message_sizes(options.sizes);
  const int iterations = options.iterations;
  const int repeats = options.repeats;
  const int timeout_s = options.timeout_s;
  const auto deadline = BenchClock::now() + std::chrono::seconds(timeout_s);

  // Everything that can be checked here is, before any process starts.
  const baton::PluginLoader loader(options.plugin_path);
  const auto plugin = loader.load(baton::PluginKind::kTransport, name);
  const baton::Viability viability = plugin->viability();
  if (!viability.viable) {
    throw baton::Error("transport '" + plugin->name() + "' (" + plugin->path() +
                       ") cannot run on this machine: " + viability.reason);
  }
  const baton::ParamValues params = resolve_transport_params(*plugin, options.params);
  const Reference reference = choose_reference(plugin->name(), options.no_reference);

  ScratchFolder scratch;
  RankJob job;
  job.plugin = plugin->path();
  job.params = options.params;
  job.sizes = sizes;
  job.iterations = iterations;
  job.repeats = repeats;
  job.timeout = std::min<std::chrono::milliseconds>(kWaitTimeout, std::chrono::seconds(timeout_s));
  if (reference.kind == Reference::Kind::kGloo) job.gloo_store = scratch.make_subfolder("gloo");

  BenchReport report;
  report.transport = plugin->name();
  report.plugin_version = plugin->descriptor().version ? plugin->descriptor().version : "?";
  report.plugin_path = plugin->path();
  report.reference = reference.description;
  report.reference_unavailable = reference.unavailable;
  report.repeats = repeats;
  report.sizes = run_ranks(job, scratch, deadline, timeout_s);
  if (reference.kind == Reference::Kind::kPerftest) {
    measure_perftest(report, reference, repeats, scratch, deadline);
  }

  std::cout << (format == "json" ? format_bench_json(report) : format_bench_table(report));
  return 0;
}

}  // namespace

void add_transport_bench(CommandLine& command_line) {
  auto options = std::make_shared<TransportBenchOptions>();
  CLI::App& transport = command_line.add_command(
      command_line.root(), "transport",
      "bandwidth and latency of a transport plugin on two local ranks, next to its library's "
      "own, measured in the same run (docs/PERFORMANCE.md)",
      [options] { return run_transport_bench(*options); });
  transport.add_option("--transport", options->transport, "the transport plugin: a name or a file")
      ->required()
      ->type_name("NAME|PATH");
  transport
      .add_option("--sizes", options->sizes,
                  "message sizes in bytes, comma-separated, with K, M or G (binary multiples); a "
                  "bf16 or fp16 activation of N elements is a 2N-byte message")
      ->capture_default_str();
  transport
      .add_option("--iterations", options->iterations,
                  "messages per measurement (default: chosen per size)")
      ->check(integer_in(1, 1000000));
  transport.add_option("--repeats", options->repeats, "measurements per size; the median is shown")
      ->capture_default_str()
      ->check(integer_in(1, 100));
  add_format_option(transport, options->format, {"table", "json"}, "table or json");
  add_repeatable_option(transport, "--param", options->params,
                        "a transport parameter (repeatable)");
  add_plugin_path_option(transport, options->plugin_path);
  transport.add_option("--timeout", options->timeout_s, "seconds the whole bench may take")
      ->capture_default_str()
      ->check(integer_in(1, 86400));
  transport.add_flag("--no-reference", options->no_reference,
                     "measure the plugin only, not its library's own figures");
}

}  // namespace baton_app
