// The executor on one rank (every stage local, no transport): the pipelined step computes
// the loss and gradients of the unpipelined model, for full and split backward, and
// failures are annotated with the timestep and the plan.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "baton/error.h"
#include "baton/plan/lower.h"
#include "baton/runtime/executor.h"
#include "baton/step_error.h"
#include "baton/unit_chain.h"
#include "plan_builders.h"
#include "test_models.h"

namespace {

using testing::HasSubstr;

struct Reference {
  double loss;
  std::map<std::string, torch::Tensor> grads;
};

Reference unpipelined(int depth, const torch::Tensor& x, const torch::Tensor& y) {
  auto chain = baton_test::make_mlp_chain(depth, 8, 3, 42);
  const auto loss = torch::mse_loss(baton_test::mlp_chain_by_hand(*chain->root(), depth, x), y);
  loss.backward();
  Reference reference{loss.item<double>(), {}};
  for (const auto& named : chain->root()->named_parameters()) {
    reference.grads[named.key()] = named.value().grad().clone();
  }
  return reference;
}

// One rank holding every stage of `plan`.
std::pair<std::unique_ptr<baton::PipelineExecutor>, std::shared_ptr<baton::ModuleChain>>
single_rank_executor(const baton::Plan& compute_plan, int depth,
                     std::vector<std::shared_ptr<baton::Validator>> validators = {}) {
  auto chain = baton_test::make_mlp_chain(depth, 8, 3, 42);
  const auto bounds = baton::stage_boundaries(*chain, compute_plan.num_stages, {});
  std::vector<std::shared_ptr<baton::Stage>> stages;
  for (int s = 0; s < compute_plan.num_stages; ++s) {
    stages.push_back(baton::make_chain_stage(chain, s, bounds[s], bounds[s + 1]));
  }
  if (validators.empty()) validators.push_back(baton::make_builtin_validator("shape_dtype"));
  auto executor = std::make_unique<baton::PipelineExecutor>(
      0, baton::lower(compute_plan), stages, nullptr, validators, baton_test::mse_loss);
  return {std::move(executor), chain};
}

void expect_matches_reference(const baton::Plan& plan, int depth) {
  torch::manual_seed(7);
  const torch::Tensor x = torch::randn({8, 8});
  const torch::Tensor y = torch::randn({8, 3});
  const Reference reference = unpipelined(depth, x, y);
  auto [executor, chain] = single_rank_executor(plan, depth);
  executor->setup({x});
  const baton::StepResult result = executor->run_step({x}, y);
  ASSERT_TRUE(result.has_loss);
  EXPECT_NEAR(result.loss, reference.loss, 1e-6);
  for (const auto& named : chain->root()->named_parameters()) {
    ASSERT_TRUE(named.value().grad().defined()) << named.key();
    EXPECT_TRUE(torch::allclose(named.value().grad(), reference.grads.at(named.key()), 1e-5, 1e-6))
        << named.key();
  }
}

TEST(Executor, GpipeOnOneRankMatchesUnpipelinedModel) {
  // Four stages on one rank: "loop" placement with one rank puts them all together.
  baton::Plan plan = baton::testing::v_gpipe_plan(1, 4);
  expect_matches_reference(plan, 3);
}

TEST(Executor, SplitBackwardMatchesUnpipelinedModel) {
  baton::Plan plan = baton::testing::gpipe_plan(1, 4, /*split_backward=*/true);
  expect_matches_reference(plan, 3);
}

TEST(Executor, WrongInputShapeIsAnnotatedWithTimestepAndPlan) {
  baton::Plan plan = baton::testing::gpipe_plan(1, 2);
  auto [executor, chain] = single_rank_executor(plan, 2);
  executor->setup({torch::randn({4, 8})});
  try {
    executor->run_step({torch::randn({6, 8})}, torch::randn({6, 3}));
    FAIL() << "expected a StepError";
  } catch (const baton::StepError& error) {
    const std::string message = error.what();
    EXPECT_EQ(error.rank(), 0);
    EXPECT_EQ(error.timestep(), 0);
    EXPECT_EQ(error.action(), "0F0");
    EXPECT_THAT(message, HasSubstr("rank 0, training step 1, timestep 0"));
    EXPECT_THAT(message, HasSubstr("stage 0 forward input 0 (microbatch 0): shape mismatch: "
                                   "expected [2, 8] float32, got [3, 8] float32"));
    EXPECT_THAT(message, HasSubstr("<-- ERROR HERE"));
  }
}

TEST(Executor, WrongInputDtypeIsNamedWithBothTypes) {
  baton::Plan plan = baton::testing::gpipe_plan(1, 2);
  auto [executor, chain] = single_rank_executor(plan, 2);
  executor->setup({torch::randn({4, 8})});
  try {
    executor->run_step({torch::randn({4, 8}, torch::kFloat64)}, torch::randn({4, 3}));
    FAIL() << "expected a StepError";
  } catch (const baton::StepError& error) {
    EXPECT_EQ(error.action(), "0F0");
    EXPECT_THAT(error.cause(), HasSubstr("stage 0 forward input 0 (microbatch 0): dtype mismatch: "
                                         "expected [2, 8] float32, got [2, 8] float64"));
  }
}

TEST(Executor, UnevenBatchIsRejectedClearly) {
  baton::Plan plan = baton::testing::gpipe_plan(1, 3);
  auto [executor, chain] = single_rank_executor(plan, 2);
  try {
    executor->setup({torch::randn({8, 8})});
    FAIL() << "expected a ConfigError";
  } catch (const baton::ConfigError& error) {
    EXPECT_THAT(error.what(),
                HasSubstr("batch size 8 (input 0, dimension 0) does not split into 3"));
    EXPECT_THAT(error.what(), HasSubstr("microbatches among: 1, 2, 4, 8"));
  }
}

TEST(Executor, SetupFailsClearlyWhenTheModelRejectsTheInput) {
  baton::Plan plan = baton::testing::gpipe_plan(1, 2);
  auto [executor, chain] = single_rank_executor(plan, 2);
  try {
    executor->setup({torch::randn({4, 5})});  // the model expects 8 features
    FAIL() << "expected an error";
  } catch (const baton::Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("setup failed: stage 0 (rank 0) cannot take the input "
                                        "batch's microbatch ([2, 5] float32)"));
  }
}

TEST(Executor, NonFiniteActivationNamesStageAndMicrobatch) {
  baton::Plan plan = baton::testing::gpipe_plan(1, 2);
  auto [executor, chain] = single_rank_executor(plan, 2, {baton::make_builtin_validator("finite")});
  torch::Tensor x = torch::randn({4, 8});
  executor->setup({x});
  x[3][1] = std::numeric_limits<float>::quiet_NaN();  // in microbatch 1
  try {
    executor->run_step({x}, torch::randn({4, 3}));
    FAIL() << "expected a StepError";
  } catch (const baton::StepError& error) {
    EXPECT_THAT(error.cause(), HasSubstr("stage 0 forward input 0 (microbatch 1): 1 of 16 values "
                                         "are not finite (1 NaN, 0 Inf)"));
    EXPECT_EQ(error.action(), "0F1");
  }
}

}  // namespace
