#include "auto_schedule.h"

#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/config_plugins.h"
#include "baton/error.h"
#include "baton/files.h"
#include "baton/store_keys.h"
#include "model_profiler.h"
#include "tuning/schedule_search.h"

namespace baton_app {
namespace {

constexpr std::size_t kTableRows = 5;

// Why a recorded choice does not fit this run's layout (another number of ranks per
// pipeline than it was made for), or empty when it fits.
std::string misfit(const std::string& choice, const baton::Config& config, int ranks) {
  const nlohmann::json chosen = nlohmann::json::parse(choice, nullptr, false);
  if (!chosen.is_object() || !chosen.contains("bounds") || !chosen["bounds"].is_array() ||
      !chosen.contains("stages_per_rank") || !chosen["stages_per_rank"].is_number_integer()) {
    return "it is not a schedule choice";
  }
  const std::int64_t pipeline_ranks = ranks / config.section("world").get_int("data_parallel");
  const std::int64_t stages = pipeline_ranks * chosen["stages_per_rank"].get<std::int64_t>();
  const auto recorded = static_cast<std::int64_t>(chosen["bounds"].size()) - 1;
  if (recorded == stages) return "";
  return "it cuts " + std::to_string(recorded) + " stages, this run's " +
         std::to_string(pipeline_ranks) + " ranks per pipeline need " + std::to_string(stages);
}

std::string choose(const baton::Config& config, const AutoScheduleContext& context) {
  const std::string choice_path = context.run_dir + "/schedule_choice.json";
  // On --resume, the choice the run folder or the checkpoint kept, when it fits this layout.
  const bool in_folder = context.resume && std::filesystem::exists(choice_path);
  if (in_folder || (context.resume && !context.recorded_choice.empty())) {
    const std::string kept =
        in_folder ? baton::read_file(choice_path, "schedule choice") : context.recorded_choice;
    const std::string where = in_folder ? choice_path : context.recorded_choice_in;
    const std::string why = misfit(kept, config, context.ranks);
    if (why.empty()) {
      std::cout << "schedule: auto: keeping the choice " << (in_folder ? "in " : "recorded in ")
                << where << " (--resume)" << std::endl;
      if (!in_folder) baton::write_file_atomically(choice_path, kept);
      return kept;
    }
    std::cout << "schedule: auto: not keeping the choice " << (in_folder ? "in " : "recorded in ")
              << where << " (" << why << "): choosing again for this layout" << std::endl;
  }
  const std::string profile_path = context.run_dir + "/profile.json";
  const CachedProfile cached = cached_or_measured_profile(
      read_profile_settings(config), profile_path, context.data_dir, context.timeout);
  if (!cached.why_measured.empty()) {
    std::cout << "schedule: auto: " << cached.why_measured << "; measured again" << std::endl;
  }
  const ModelProfile& profile = cached.profile;
  const bool reused = cached.reused;
  // rank 0 decides; it needs only the search space the configuration asks for.
  const SearchSpace space = search_space_from_config(config, context.ranks, profile.batch_size);
  const SearchResult result = search_schedules(baton::plugin_loader_for(config), profile, space);
  std::cout << "schedule: auto: " << (reused ? "reused the profile " : "measured the model into ")
            << profile_path << "; the best of " << result.ranked.size() << " candidates:\n"
            << format_search_table(result, kTableRows) << std::flush;
  const Candidate& best = result.ranked.front();
  const nlohmann::json chosen = {
      {"schedule", best.schedule},         {"stages_per_rank", best.stages_per_rank},
      {"microbatches", best.microbatches}, {"bounds", best.bounds},
      {"recompute", best.recompute},       {"predicted_step_s", best.predicted_step_s}};
  const std::string text = chosen.dump(2) + "\n";
  baton::write_file_atomically(choice_path, text);
  return text;
}

}  // namespace

baton::Config with_schedule_choice(baton::Config config, const std::string& text,
                                   const std::string& origin_text) {
  const nlohmann::json chosen = nlohmann::json::parse(text, nullptr, false);
  if (!chosen.is_object() || !chosen.contains("schedule") || !chosen.contains("bounds")) {
    throw baton::ConfigError(origin_text + ": not a schedule choice; delete it to choose again");
  }
  const baton::ValueOrigin origin{"schedule: auto (" + origin_text + ")"};
  const auto scalar = [&](std::string text) {
    baton::RawValue value;
    value.scalar = std::move(text);
    value.origin = value.key_origin = origin;
    return value;
  };
  const auto list = [&](std::vector<std::string> items) {
    baton::RawValue value = scalar("");
    value.is_list = true;
    value.items = std::move(items);
    return value;
  };
  std::vector<std::string> cuts;
  const std::vector<int> bounds = chosen["bounds"].get<std::vector<int>>();
  for (std::size_t s = 1; s + 1 < bounds.size(); ++s) cuts.push_back(std::to_string(bounds[s]));
  std::vector<std::pair<std::string, baton::RawValue>> values = {
      {"schedule.name", scalar(chosen["schedule"].get<std::string>())},
      {"schedule.stages_per_rank", scalar(std::to_string(chosen["stages_per_rank"].get<int>()))},
      {"schedule.microbatches", scalar(std::to_string(chosen["microbatches"].get<int>()))}};
  // With stage files (model.stages) the files are the stages: the choice cuts nothing.
  if (config.section("model").at("stages").as_string_list().empty()) {
    values.emplace_back("model.cuts", list(cuts));
  }
  if (chosen.value("recompute", false)) values.emplace_back("model.recompute", list({"on"}));
  // Through the front door: typed and checked as the YAML's values are.
  return baton::with_chosen_values(std::move(config), values);
}

std::string choose_auto_schedule(const baton::Config& config, const AutoScheduleContext& context) {
  if (!baton::schedule_chosen_at_start(config)) return "";
  std::string text;
  if (context.rank == 0) {
    text = choose(config, context);
    if (context.store) {
      context.store->set(baton::store_keys::kAutoSchedule,
                         std::vector<std::uint8_t>(text.begin(), text.end()));
    }
  } else {
    const auto bytes = context.store->get(baton::store_keys::kAutoSchedule, context.timeout);
    text.assign(bytes.begin(), bytes.end());
  }
  return text;
}

}  // namespace baton_app
