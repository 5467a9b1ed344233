#include "transport_rank.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>

#include "baton/config.h"
#include "baton/files.h"
#include "baton/store_keys.h"
#include "baton/stores.h"
#include "baton/transport.h"
#include "channel.h"
#include "median.h"
#include "method.h"
#include "plugin_channel.h"
#include "report.h"
#include "sizes.h"
#if BATON_BENCH_WITH_GLOO
#include "gloo_channel.h"
#endif

namespace baton_app {

const char* const kBenchRankCommand = "transport-rank";

namespace {

std::string join_sizes(const std::vector<std::size_t>& sizes) {
  std::string text;
  for (std::size_t bytes : sizes) text += (text.empty() ? "" : ",") + std::to_string(bytes);
  return text;
}

// Waits until both ranks arrived, so that neither tears its connections down while the
// other still uses them.
void barrier(baton::Store& store, const std::string& name, std::chrono::milliseconds timeout) {
  if (store.add(baton::store_keys::barrier_count(name), 1) == 2) {
    store.set(baton::store_keys::barrier_open(name), {1});
  }
  store.get(baton::store_keys::barrier_open(name), timeout);
}

// Runs `action`, prefixing any error with what was being measured.
template <typename Action>
auto measuring(const std::string& what, Action&& action) -> decltype(action()) {
  try {
    return action();
  } catch (const std::exception& error) {
    throw baton::Error(what + ": " + error.what());
  }
}

struct ChannelSamples {
  std::vector<double> round_trips;  // seconds
  std::vector<double> gbps;         // one per round
};

SizeFigures measure_size(const RankJob& job, std::size_t bytes,
                         const std::vector<BenchChannel*>& channels) {
  const SizePlan plan = plan_size(bytes, job.iterations);
  const std::string size = format_message_size(bytes);
  BenchBuffers buffers = BenchBuffers::allocate(bytes, plan.window);
  std::vector<ChannelSamples> samples(channels.size());
  for (BenchChannel* channel : channels) {
    measuring(size + ", " + channel->name() + ", warm-up", [&] {
      channel->prepare(buffers);
      measure_round_trips(*channel, job.rank, plan.warmup);
      measure_stream(*channel, job.rank, plan.warmup, plan.window);
    });
  }
  for (int round = 0; round < job.repeats; ++round) {
    // Alternate which channel goes first, so that neither always follows the other.
    std::vector<std::size_t> order(channels.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (round % 2 == 1) std::reverse(order.begin(), order.end());
    for (std::size_t i : order) {
      const auto times = measuring(size + ", " + channels[i]->name() + ", latency", [&] {
        return measure_round_trips(*channels[i], job.rank, plan.iterations);
      });
      samples[i].round_trips.insert(samples[i].round_trips.end(), times.begin(), times.end());
    }
    for (std::size_t i : order) {
      const double seconds = measuring(size + ", " + channels[i]->name() + ", bandwidth", [&] {
        return measure_stream(*channels[i], job.rank, plan.iterations, plan.window);
      });
      if (job.rank == 0) {
        samples[i].gbps.push_back(static_cast<double>(bytes) * plan.iterations / seconds / 1e9);
      }
    }
  }
  SizeFigures figures;
  figures.bytes = bytes;
  figures.iterations = plan.iterations;
  figures.window = plan.window;
  if (job.rank == 0) {
    figures.latency_us = median_of(samples[0].round_trips) / 2 * 1e6;
    figures.gbps = median_of(samples[0].gbps);
    if (channels.size() > 1) {
      figures.reference_latency_us = median_of(samples[1].round_trips) / 2 * 1e6;
      figures.reference_gbps = median_of(samples[1].gbps);
    }
  }
  return figures;
}

void run(const RankJob& job) {
  baton::RendezvousOptions options;
  options.kind = "file";
  options.file = job.store;
  options.rank = job.rank;
  options.world_size = 2;
  options.timeout = job.timeout;
  options.run_id = "bench";
  const std::shared_ptr<baton::Store> store = baton::make_rendezvous_store(options);

  const auto plugin = baton::PluginLoader().load(baton::PluginKind::kTransport, job.plugin);
  baton::PluginPtr<baton::Transport> transport =
      plugin->create_as<baton::Transport>(resolve_transport_params(*plugin, job.params));
  baton::TransportContext context;
  context.rank = job.rank;
  context.world_size = 2;
  context.store = std::make_shared<baton::PrefixStore>("transport", store);
  context.timeout = job.timeout;
  transport->connect(context);

  PluginChannel plugin_channel(*transport, 1 - job.rank, job.timeout);
  std::vector<BenchChannel*> channels = {&plugin_channel};
#if BATON_BENCH_WITH_GLOO
  std::unique_ptr<GlooChannel> gloo_channel;
  if (!job.gloo_store.empty()) {
    gloo_channel = std::make_unique<GlooChannel>(job.rank, job.gloo_store, job.timeout);
    channels.push_back(gloo_channel.get());
  }
#else
  if (!job.gloo_store.empty()) {
    throw baton::Error("this baton was built without gloo: no raw gloo reference");
  }
#endif

  std::vector<SizeFigures> figures;
  for (std::size_t bytes : job.sizes) figures.push_back(measure_size(job, bytes, channels));
  if (job.rank == 0) baton::write_file_atomically(job.figures, serialize_figures(figures));

  barrier(*store, "done", job.timeout);
#if BATON_BENCH_WITH_GLOO
  gloo_channel.reset();
#endif
  transport.reset();  // before its plugin is unloaded
}

}  // namespace

std::vector<std::string> rank_command_line(const RankJob& job) {
  std::vector<std::string> args = {kBenchRankCommand,
                                   "--rank",
                                   std::to_string(job.rank),
                                   "--parent",
                                   std::to_string(job.parent),
                                   "--plugin",
                                   job.plugin,
                                   "--store",
                                   job.store,
                                   "--gloo-store",
                                   job.gloo_store,
                                   "--sizes",
                                   join_sizes(job.sizes),
                                   "--iterations",
                                   std::to_string(job.iterations),
                                   "--repeats",
                                   std::to_string(job.repeats),
                                   "--timeout-ms",
                                   std::to_string(job.timeout.count()),
                                   "--figures",
                                   job.figures};
  for (const std::string& param : job.params) {
    args.push_back("--param");
    args.push_back(param);
  }
  return args;
}

void add_rank_command(CommandLine& command_line) {
  struct Options {
    RankJob job;
    std::string sizes;
    int timeout_ms = 0;
  };
  auto options = std::make_shared<Options>();
  CLI::App& command = command_line.add_command(
      command_line.root(), kBenchRankCommand,
      "started by `baton bench transport`, not by hand: one of its two ranks", [options] {
        RankJob job = options->job;
        job.sizes = parse_message_sizes(options->sizes);
        job.timeout = std::chrono::milliseconds(options->timeout_ms);
        return run_bench_rank(job);
      });
  command.group("");  // internal
  RankJob& job = options->job;
  command.add_option("--rank", job.rank)->required()->check(integer_in(0, 1));
  command.add_option("--parent", job.parent)->required()->check(integer_in(1, 1L << 30));
  command.add_option("--plugin", job.plugin)->required();
  command.add_option("--store", job.store)->required();
  command.add_option("--gloo-store", job.gloo_store);
  command.add_option("--sizes", options->sizes)->required();
  command.add_option("--iterations", job.iterations)->required()->check(integer_in(0, 1000000));
  command.add_option("--repeats", job.repeats)->required()->check(integer_in(1, 100));
  command.add_option("--timeout-ms", options->timeout_ms)
      ->required()
      ->check(integer_in(1, 86400000));
  command.add_option("--figures", job.figures)->required();
  add_repeatable_option(command, "--param", job.params, "");
}

baton::ParamValues resolve_transport_params(const baton::LoadedPlugin& plugin,
                                            const std::vector<std::string>& assignments) {
  const baton::RawParams raw = params_from_command_line(assignments, "transport.params");
  const baton::PluginDescriptor& descriptor = plugin.descriptor();
  return baton::resolve_params(raw, descriptor.params, descriptor.num_params,
                               "transport plugin '" + plugin.name() + "'");
}

int run_bench_rank(const RankJob& job) {
  // The command kills its ranks on failure and timeout; this covers the command itself
  // being killed.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != job.parent) {
    std::cerr << "baton bench: rank " << job.rank
              << ": error: the bench command that started this rank is gone" << std::endl;
    return 1;
  }
  try {
    run(job);
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "baton bench: rank " << job.rank << ": error: " << error.what() << std::endl;
    return 1;
  }
}

}  // namespace baton_app
