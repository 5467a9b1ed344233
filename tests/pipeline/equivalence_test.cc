// For every schedule plugin, on every viable transport, with 2 and 4 ranks: one training
// step through `baton launch` gives the loss and every parameter gradient of the
// unpipelined model in one process, and several SGD steps give the same parameters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "batches.h"
#include "baton/config.h"
#include "baton/error.h"
#include "baton/module_chain.h"
#include "baton/plugin_loader.h"
#include "baton/unit_chain.h"
#include "launch_run.h"
#include "model_catalog.h"

namespace {

const std::string kBaton = BATON_BINARY;
constexpr int kSteps = 3;

struct Case {
  std::string schedule;
  int stages_per_rank;
  int ranks;
  std::string transport;
};

std::string case_name(const testing::TestParamInfo<Case>& info) {
  return info.param.schedule + "_" + std::to_string(info.param.ranks) + "ranks_" +
         info.param.transport;
}

// The run's configuration, shared by the launch (as --set) and the reference.
std::vector<std::string> settings_for(const Case& c) {
  const int stages = c.ranks * c.stages_per_rank;
  return {"model.name=mlp",
          "model.params.in_features=12",
          "model.params.hidden=16",
          "model.params.layers=" + std::to_string(stages),  // input + layers + head units
          "model.params.out_features=5",
          "data.source=synthetic",
          "data.batch_size=16",
          "schedule.name=" + c.schedule,
          "schedule.microbatches=8",
          "schedule.stages_per_rank=" + std::to_string(c.stages_per_rank),
          "transport.name=" + c.transport,
          "optimizer.name=sgd",
          "optimizer.lr=0.05",
          "run.steps=" + std::to_string(kSteps),
          "run.seed=11",
          "run.name=equivalence",
          "world.timeout_s=60"};
}

struct Reference {
  double first_loss;
  std::map<std::string, torch::Tensor> first_grads;
  std::map<std::string, torch::Tensor> final_params;
};

// The same model, data and optimizer, unpipelined, in this process.
Reference unpipelined(const Case& c) {
  baton::ConfigOverrides overrides;
  overrides.set = settings_for(c);
  overrides.use_environment = false;
  baton::Config config = baton::load_config_text("", "test", overrides);
  const auto& entry = baton_models::find_model(config.section("model").at("name"));
  config.set_plugin_params("model", baton::resolve_params(config.raw_params("model"), entry.params,
                                                          entry.num_params, "model"));
  auto model = entry.build(config.plugin_params("model"), 11);
  const auto batches = baton_models::make_batch_source(config, model, "");
  auto* chain = dynamic_cast<baton::ModuleChain*>(model.chain.get());
  std::vector<torch::Tensor> params = chain->root()->parameters();
  torch::optim::SGD sgd(params, torch::optim::SGDOptions(0.05));
  Reference reference{};
  for (int step = 1; step <= kSteps; ++step) {
    const auto batch = batches->batch(step);
    sgd.zero_grad();
    const auto loss = model.loss(baton::run_whole_chain(*model.chain, batch.inputs), batch.targets);
    loss.backward();
    if (step == 1) {
      reference.first_loss = loss.item<double>();
      for (const auto& named : chain->root()->named_parameters()) {
        reference.first_grads[named.key()] = named.value().grad().clone();
      }
    }
    sgd.step();
  }
  for (const auto& named : chain->root()->named_parameters()) {
    reference.final_params[named.key()] = named.value().detach().clone();
  }
  return reference;
}

class PipelineEquivalence : public testing::TestWithParam<Case> {};

TEST_P(PipelineEquivalence, MatchesUnpipelinedModel) {
  const Case& c = GetParam();
  std::shared_ptr<baton::LoadedPlugin> plugin;
  try {
    plugin = baton::PluginLoader().load(baton::PluginKind::kTransport, c.transport);
  } catch (const baton::PluginError& error) {
    GTEST_SKIP() << c.transport << " is not built here: " << error.what();
  }
  const auto viability = plugin->viability();
  if (!viability.viable) GTEST_SKIP() << c.transport << " is not viable here: " << viability.reason;

  const Reference reference = unpipelined(c);
  const auto result = baton_test::launch(kBaton, c.ranks, settings_for(c), case_name({c, 0}));
  ASSERT_EQ(result.command.exit_code, 0) << result.command.output;

  std::map<std::string, torch::Tensor> grads, params;
  bool saw_loss = false;
  int ranks_with_buffer_counts = 0;
  for (const auto& dump : result.dumps) {
    for (const auto& [key, value] : dump) {
      if (key.rfind("grad.", 0) == 0) grads[key.substr(5)] = value;
      if (key.rfind("param.", 0) == 0) params[key.substr(6)] = value;
      if (key == "recv_buffer_allocations") {
        // [after step 1, after the last step]: nothing allocated once steps run.
        EXPECT_GT(value[0].item<std::int64_t>(), 0);
        EXPECT_EQ(value[1].item<std::int64_t>(), value[0].item<std::int64_t>());
        ++ranks_with_buffer_counts;
      }
      if (key == "loss") {
        saw_loss = true;
        ASSERT_EQ(value.numel(), kSteps);
        EXPECT_NEAR(value[0].item<double>(), reference.first_loss,
                    1e-5 * std::abs(reference.first_loss) + 1e-6);
      }
    }
  }
  EXPECT_TRUE(saw_loss) << result.command.output;
  EXPECT_EQ(ranks_with_buffer_counts, c.ranks);
  // Every parameter of the full model appears exactly once across the ranks.
  ASSERT_EQ(grads.size(), reference.first_grads.size()) << result.command.output;
  ASSERT_EQ(params.size(), reference.final_params.size());
  for (const auto& [name, expected] : reference.first_grads) {
    ASSERT_TRUE(grads.count(name)) << name;
    EXPECT_TRUE(torch::allclose(grads[name], expected, 1e-5, 1e-6))
        << name << " max diff " << (grads[name] - expected).abs().max().item<double>();
  }
  for (const auto& [name, expected] : reference.final_params) {
    EXPECT_TRUE(torch::allclose(params.at(name), expected, 1e-5, 1e-6))
        << name << " after " << kSteps << " SGD steps, max diff "
        << (params.at(name) - expected).abs().max().item<double>();
  }
}

std::vector<Case> all_cases() {
  const std::vector<std::pair<std::string, int>> schedules = {
      {"gpipe", 1},      {"1f1b", 1}, {"zero_bubble", 1}, {"interleaved_1f1b", 2},
      {"looped_bfs", 2}, {"zbv", 2},  {"dualpipev", 2}};
  std::vector<Case> cases;
  for (const std::string transport : {"gloo", "ucx"}) {
    for (int ranks : {2, 4}) {
      for (const auto& [schedule, stages_per_rank] : schedules) {
        cases.push_back({schedule, stages_per_rank, ranks, transport});
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(EverySchedule, PipelineEquivalence, testing::ValuesIn(all_cases()),
                         case_name);

}  // namespace
