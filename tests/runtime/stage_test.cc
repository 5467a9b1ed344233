// Stages keep the full model's parameter names, and cutting follows model.cuts or balances
// parameter counts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "baton/error.h"
#include "baton/unit_chain.h"
#include "test_models.h"

namespace {

using testing::HasSubstr;

TEST(ChainStage, KeepsOriginalParameterNames) {
  auto chain = baton_test::make_mlp_chain(4, 8, 3, 0);
  const auto bounds = baton::stage_boundaries(*chain, 2, {2});
  ASSERT_EQ(bounds, (std::vector<int>{0, 2, 5}));
  auto second = baton::make_chain_stage(chain, 1, bounds[1], bounds[2]);
  std::vector<std::string> names;
  for (const auto& named : second->named_parameters()) names.push_back(named.first);
  EXPECT_EQ(names, (std::vector<std::string>{"layers.2.fc.weight", "layers.2.fc.bias",
                                             "layers.3.fc.weight", "layers.3.fc.bias",
                                             "head.weight", "head.bias"}));
  // The same tensors as the full model's: a stage's state dict is a slice of the model's.
  const auto full = chain->root()->named_parameters();
  for (const auto& named : second->named_parameters()) {
    EXPECT_TRUE(full[named.first].is_same(named.second)) << named.first;
  }
  EXPECT_EQ(second->describe(), "stage 1 (layers.2 .. head)");
}

TEST(ChainStage, AutomaticCutsBalanceParameterCounts) {
  auto chain = baton_test::make_mlp_chain(6, 16, 16, 0);  // 7 units of equal size
  EXPECT_EQ(baton::stage_boundaries(*chain, 7, {}), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  const auto bounds = baton::stage_boundaries(*chain, 2, {});
  ASSERT_EQ(bounds.size(), 3u);
  EXPECT_TRUE(bounds[1] == 3 || bounds[1] == 4) << bounds[1];
}

TEST(ChainStage, StagesInSequenceComputeTheWholeModel) {
  auto chain = baton_test::make_mlp_chain(3, 8, 2, 1);
  const auto bounds = baton::stage_boundaries(*chain, 3, {});
  const torch::Tensor x = torch::randn({5, 8});
  std::vector<torch::Tensor> values{x};
  for (int s = 0; s < 3; ++s)
    values = baton::make_chain_stage(chain, s, bounds[s], bounds[s + 1])->forward(values);
  const torch::Tensor expected = baton_test::mlp_chain_by_hand(*chain->root(), 3, x);
  EXPECT_TRUE(torch::allclose(values[0], expected));
}

TEST(ChainStage, RejectsImpossibleCuts) {
  auto chain = baton_test::make_mlp_chain(2, 4, 2, 0);  // 3 units
  auto message = [&](int stages, std::vector<std::int64_t> cuts) {
    try {
      baton::stage_boundaries(*chain, stages, cuts);
    } catch (const baton::ConfigError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message(4, {}), HasSubstr("needs 4 stages but the model has only 3 units"));
  EXPECT_THAT(message(4, {}), HasSubstr("0:layers.0, 1:layers.1, 2:head"));
  EXPECT_THAT(message(2, {1, 2}), HasSubstr("model.cuts has 2 entries; 2 stages need 1"));
  EXPECT_THAT(message(3, {2, 1}),
              HasSubstr("must be increasing unit indices in 1..2, got 1 after 2"));
  EXPECT_THAT(message(2, {0}), HasSubstr("got 0 after 0"));
}

}  // namespace
