#include "stage_cuts.h"

#include <iostream>
#include <sstream>

#include "baton/error.h"
#include "baton/files.h"
#include "baton/plan/balanced_cuts.h"
#include "baton/store_keys.h"
#include "tuning/unit_costs.h"

namespace baton_app {
namespace {

const char* const kCutsFile = "/balanced_cuts.txt";

std::vector<std::int64_t> parse_cuts(const std::string& text) {
  std::vector<std::int64_t> cuts;
  std::stringstream in(text);
  for (std::int64_t cut; in >> cut;) cuts.push_back(cut);
  return cuts;
}

std::string measure_balanced_cuts(baton::UnitChain& chain, int num_stages,
                                  const std::vector<at::Tensor>& sample) {
  std::vector<double> costs;
  for (const auto& cost : measure_unit_costs(chain, sample)) costs.push_back(cost.total());
  const std::vector<int> bounds = baton::balanced_boundaries(costs, num_stages);
  std::string text;
  for (std::size_t s = 1; s + 1 < bounds.size(); ++s) text += std::to_string(bounds[s]) + " ";
  return text;
}

}  // namespace

std::string format_cuts(const std::vector<int>& bounds) {
  std::string text;
  for (std::size_t s = 1; s + 1 < bounds.size(); ++s)
    text += (s > 1 ? ", " : "") + std::to_string(bounds[s]);
  return "[" + text + "]";
}

std::vector<int> resolve_stage_boundaries(const baton::Setting<StageCuts>& setting,
                                          baton::UnitChain& chain, int num_stages,
                                          const std::vector<at::Tensor>& sample,
                                          const StageCutContext& context) {
  switch (setting.value.kind) {
    case StageCuts::Kind::kByParams:
      return baton::stage_boundaries(chain, num_stages, {});
    case StageCuts::Kind::kAtUnits:
      return baton::stage_boundaries(chain, num_stages, setting.value.units);
    case StageCuts::Kind::kBalanced:
      break;
  }
  if (num_stages == 1) return {0, chain.num_units()};
  std::string text;
  const std::string remembered = context.run_dir + kCutsFile;
  if (context.rank == 0) {
    if (context.resume) {
      const auto held = baton::read_file_if_present(remembered, "the remembered balanced cuts");
      if (held) text = held->substr(0, held->find('\n'));
    }
    // Cuts remembered for another number of stages (a resume onto another layout) do not
    // apply: measured again, and said so.
    if (!text.empty() && static_cast<int>(parse_cuts(text).size()) != num_stages - 1) {
      std::cout << "model.cuts: balanced: " << remembered << " holds the cuts of "
                << parse_cuts(text).size() + 1 << " stages, this run has " << num_stages
                << ": measuring again" << std::endl;
      text.clear();
    }
    if (text.empty()) {
      text = measure_balanced_cuts(chain, num_stages, sample);
      baton::make_folders(context.run_dir, "run");
      baton::write_file_atomically(remembered, text + "\n");
    }
    if (context.store) {
      context.store->set(baton::store_keys::kBalancedCuts,
                         std::vector<std::uint8_t>(text.begin(), text.end()));
    }
  } else if (context.store) {
    const auto bytes = context.store->get(baton::store_keys::kBalancedCuts, context.timeout);
    text.assign(bytes.begin(), bytes.end());
  }
  return baton::stage_boundaries(chain, num_stages, parse_cuts(text));
}

}  // namespace baton_app
