// `baton tune [CONFIG] [--set k=v]... [--profile FILE] [--top N] [--format table|json]`:
// measures the configured model (or reuses its cached profile), then simulates every
// schedule plugin, stages per rank and microbatch count the batch allows, with cuts balanced
// on the measured costs, and prints the candidates ranked by predicted step time — without
// training. schedule.name other than `auto` searches that schedule only; a
// schedule.microbatches or stages_per_rank set in the configuration is kept.
#include <ATen/Parallel.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "baton/config_plugins.h"
#include "baton/error.h"
#include "commands.h"
#include "number_format.h"
#include "run_options.h"
#include "training/rank_compute.h"
#include "training/resolved_config.h"
#include "training/run_settings.h"
#include "training/world_info.h"
#include "tuning/model_profiler.h"
#include "tuning/schedule_search.h"

namespace baton_app {
namespace {

struct TuneOptions {
  RunOptions run;
  std::string profile;  // default: <run dir>/profile.json
  std::string format = "table";
  int top = 10;
};

int run_tune(const TuneOptions& options) {
  baton::Config config = load_run_config(options.run);
  resolve_run_config(config);
  const RunSettings settings = read_run_settings(config);
  WorldInfo world;  // one process: the threads a rank of this run would have
  world.world_size = static_cast<int>(config.section("world").get_int("ranks"));
  world.local_world_size = world.world_size;
  const RankCompute compute = set_up_compute(settings.world, world);
  std::cerr << "compute: " << compute.describe() << "\n";

  const std::string path =
      options.profile.empty() ? settings.run_dir + "/profile.json" : options.profile;
  const CachedProfile cached = cached_or_measured_profile(read_profile_settings(config), path,
                                                          BATON_DATA_DIR, settings.timeout);
  if (!cached.why_measured.empty()) {
    std::cerr << "profile: " << cached.why_measured << "; measured again\n";
  }
  const ModelProfile& profile = cached.profile;
  const bool reused = cached.reused;
  std::cerr << "profile: " << (reused ? "reused " : "measured and written to ") << path << " ("
            << profile.sizes.size() << " microbatch sizes, " << profile.sizes.front().units.size()
            << " units; a stage's split backward x" << fixed(profile.split_backward_factor, 3)
            << " its units'; transfers " << profile.transfer.source << ")\n";

  const SearchSpace space = search_space_from_config(config, world.world_size, profile.batch_size);
  const SearchResult result = search_schedules(baton::plugin_loader_for(config), profile, space);
  if (options.format == "json") {
    std::cout << format_search_json(result);
  } else {
    std::cout << format_search_table(result, static_cast<std::size_t>(options.top));
  }
  return 0;
}

}  // namespace

void add_tune_command(CommandLine& command_line) {
  auto options = std::make_shared<TuneOptions>();
  CLI::App& tune = command_line.add_command(
      command_line.root(), "tune",
      "measure the configured model and rank every schedule, stages per rank and microbatch "
      "count by simulated step time, with cuts balanced on the measured costs (no training)",
      [options] { return run_tune(*options); });
  add_config_options(tune, options->run);
  tune.add_option("--profile", options->profile,
                  "the profile to reuse or write (default: <run dir>/profile.json)")
      ->type_name("FILE");
  tune.add_option("--top", options->top, "rows of the table (0: all)")
      ->check(integer_in(0, 100000))
      ->capture_default_str();
  add_format_option(tune, options->format, {"table", "json"}, "table or json");
}

}  // namespace baton_app
