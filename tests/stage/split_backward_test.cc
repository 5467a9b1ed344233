// The I/W split must give exactly the gradients plain autograd gives for the whole graph, for
// every shape of graph a stage can have: activations flowing through weights, a first stage
// whose input needs no gradient, a weight used on two paths, and a stage with two inputs and
// two outputs. The oracle is torch::autograd::backward itself, nothing of baton's.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "baton/runtime/split_backward.h"

namespace {

struct Block : torch::nn::Module {
  Block(int64_t width) {
    fc1 = register_module("fc1", torch::nn::Linear(width, 2 * width));
    fc2 = register_module("fc2", torch::nn::Linear(2 * width, width));
    norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width})));
  }
  torch::Tensor forward(const torch::Tensor& x) { return norm(x + fc2(torch::gelu(fc1(x)))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};

std::vector<torch::Tensor> parameters_of(torch::nn::Module& module) {
  return module.parameters();
}

std::vector<torch::Tensor> grads_of(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : params)
    grads.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
  return grads;
}

// The oracle: one call of plain autograd on the outputs; the inputs' gradients are what it
// accumulated into them (undefined for an input that needs none).
std::vector<torch::Tensor> autograd_backward(const std::vector<torch::Tensor>& outputs,
                                             const std::vector<torch::Tensor>& grad_outputs,
                                             const std::vector<torch::Tensor>& inputs) {
  torch::autograd::backward(outputs, grad_outputs);
  std::vector<torch::Tensor> grads;
  for (const auto& input : inputs) {
    grads.push_back(input.requires_grad() && input.grad().defined() ? input.grad().clone()
                                                                    : torch::Tensor());
  }
  return grads;
}

void zero_grads(const std::vector<torch::Tensor>& params) {
  for (auto p : params) p.mutable_grad() = torch::Tensor();
}

void expect_all_close(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].defined(), b[i].defined()) << "tensor " << i;
    if (a[i].defined()) {
      EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-5, 1e-6)) << "tensor " << i;
    }
  }
}

TEST(SplitBackward, MiddleStageMatchesAutograd) {
  torch::manual_seed(0);
  Block block(16);
  const auto params = parameters_of(block);
  const torch::Tensor x = torch::randn({4, 16});
  const torch::Tensor grad_out = torch::randn({4, 16});

  torch::Tensor input = x.clone().requires_grad_(true);
  const auto expected_input_grads = autograd_backward({block.forward(input)}, {grad_out}, {input});
  const auto expected_grads = grads_of(params);
  zero_grads(params);

  torch::Tensor input2 = x.clone().requires_grad_(true);
  baton::SplitBackward split({block.forward(input2)}, {input2}, params);
  EXPECT_TRUE(split.is_split());
  const auto input_grads = split.backward_input({grad_out});
  // I leaves every weight gradient for W.
  for (const auto& p : params) EXPECT_FALSE(p.grad().defined());
  split.backward_weight();

  expect_all_close(input_grads, expected_input_grads);
  expect_all_close(grads_of(params), expected_grads);
}

TEST(SplitBackward, FirstStageWithIntegerInputsDoesAllWorkInW) {
  torch::manual_seed(1);
  torch::nn::Embedding embedding(50, 8);
  torch::nn::Linear head(8, 8);
  std::vector<torch::Tensor> params = embedding->parameters();
  for (const auto& p : head->parameters()) params.push_back(p);
  const torch::Tensor tokens = torch::randint(0, 50, {3, 5});
  const torch::Tensor grad_out = torch::randn({3, 5, 8});

  autograd_backward({head(embedding(tokens))}, {grad_out}, {tokens});
  const auto expected_grads = grads_of(params);
  zero_grads(params);

  baton::SplitBackward split({head(embedding(tokens))}, {tokens}, params);
  const auto input_grads = split.backward_input({grad_out});
  ASSERT_EQ(input_grads.size(), 1u);
  EXPECT_FALSE(input_grads[0].defined());
  for (const auto& p : params) EXPECT_FALSE(p.grad().defined());
  split.backward_weight();
  expect_all_close(grads_of(params), expected_grads);
}

TEST(SplitBackward, LastStageLossWithoutOutputGradient) {
  torch::manual_seed(2);
  Block block(8);
  const auto params = parameters_of(block);
  const torch::Tensor x = torch::randn({6, 8});
  torch::Tensor a = x.clone().requires_grad_(true);
  const auto expected_input_grads = autograd_backward({block.forward(a).pow(2).mean()}, {}, {a});
  const auto expected_grads = grads_of(params);
  zero_grads(params);

  torch::Tensor b = x.clone().requires_grad_(true);
  baton::SplitBackward split({block.forward(b).pow(2).mean()}, {b}, params);
  const auto input_grads = split.backward_input({});
  split.backward_weight();
  expect_all_close(input_grads, expected_input_grads);
  expect_all_close(grads_of(params), expected_grads);
}

TEST(SplitBackward, AccumulatesAcrossMicrobatches) {
  torch::manual_seed(3);
  Block block(8);
  const auto params = parameters_of(block);
  const torch::Tensor x0 = torch::randn({2, 8}), x1 = torch::randn({2, 8});
  const torch::Tensor g0 = torch::randn({2, 8}), g1 = torch::randn({2, 8});
  for (const auto& [x, g] : {std::pair{x0, g0}, std::pair{x1, g1}}) {
    torch::Tensor in = x.clone().requires_grad_(true);
    autograd_backward({block.forward(in)}, {g}, {in});
  }
  const auto expected_grads = grads_of(params);
  zero_grads(params);

  // Two microbatches in flight, their W in the opposite order of their I.
  torch::Tensor in0 = x0.clone().requires_grad_(true), in1 = x1.clone().requires_grad_(true);
  baton::SplitBackward s0({block.forward(in0)}, {in0}, params);
  baton::SplitBackward s1({block.forward(in1)}, {in1}, params);
  s0.backward_input({g0});
  s1.backward_input({g1});
  s1.backward_weight();
  s0.backward_weight();
  expect_all_close(grads_of(params), expected_grads);
}

TEST(SplitBackward, StageWithTwoInputsAndTwoOutputs) {
  torch::manual_seed(5);
  torch::nn::Linear mix_a(8, 8), mix_b(8, 8);
  std::vector<torch::Tensor> params = mix_a->parameters();
  for (const auto& p : mix_b->parameters()) params.push_back(p);
  const torch::Tensor xa = torch::randn({4, 8}), xb = torch::randn({4, 8});
  const torch::Tensor ga = torch::randn({4, 8}), gb = torch::randn({4, 8});
  // Each output depends on both inputs.
  auto forward = [&](const torch::Tensor& a, const torch::Tensor& b) {
    return std::vector<torch::Tensor>{torch::relu(mix_a(a) + b), torch::tanh(mix_b(b)) * a};
  };
  torch::Tensor a = xa.clone().requires_grad_(true), b = xb.clone().requires_grad_(true);
  const auto expected_input_grads = autograd_backward(forward(a, b), {ga, gb}, {a, b});
  const auto expected_grads = grads_of(params);
  zero_grads(params);

  torch::Tensor a2 = xa.clone().requires_grad_(true), b2 = xb.clone().requires_grad_(true);
  baton::SplitBackward split(forward(a2, b2), {a2, b2}, params);
  EXPECT_TRUE(split.is_split());
  const auto input_grads = split.backward_input({ga, gb});
  for (const auto& p : params) EXPECT_FALSE(p.grad().defined());
  split.backward_weight();
  ASSERT_EQ(input_grads.size(), 2u);
  expect_all_close(input_grads, expected_input_grads);
  expect_all_close(grads_of(params), expected_grads);
}

TEST(SplitBackward, WeightSharedWithTheInputPathFallsBackToFullBackward) {
  torch::manual_seed(4);
  torch::nn::Linear shared(6, 6);
  const auto params = shared->parameters();
  const torch::Tensor x = torch::randn({3, 6});
  const torch::Tensor g = torch::randn({3, 6});
  // The weight also scales the input before the same layer sees it.
  auto forward = [&](const torch::Tensor& in) { return shared(in * shared->weight.sum()); };
  torch::Tensor a = x.clone().requires_grad_(true);
  const auto expected_input_grads = autograd_backward({forward(a)}, {g}, {a});
  const auto expected_grads = grads_of(params);
  zero_grads(params);

  torch::Tensor b = x.clone().requires_grad_(true);
  baton::SplitBackward split({forward(b)}, {b}, params);
  EXPECT_FALSE(split.is_split());
  const auto input_grads = split.backward_input({g});
  split.backward_weight();
  expect_all_close(input_grads, expected_input_grads);
  expect_all_close(grads_of(params), expected_grads);
}

// What data parallelism starts its all-reduces on: W reports each parameter exactly once, and
// only when its gradient is final — at the report it already equals what plain autograd
// gives. A weight used twice (tied, on two weight paths) is reported after its second use;
// a split that fell back to the full backward reports every parameter.
TEST(SplitBackward, WeightReportsEachParameterOnceWhenItsGradientIsFinal) {
  torch::manual_seed(5);
  torch::nn::Linear first(6, 6), tied(6, 6);
  std::vector<torch::Tensor> params = first->parameters();
  for (const auto& p : tied->parameters()) params.push_back(p);
  const torch::Tensor x = torch::randn({3, 6}), g = torch::randn({3, 6});
  // `tied` is applied on two parallel paths: its weight gets gradient from two weight roots.
  auto forward = [&](const torch::Tensor& in) {
    const torch::Tensor h = first(in);
    return tied(h) + tied(h * 2);
  };
  torch::Tensor a = x.clone().requires_grad_(true);
  autograd_backward({forward(a)}, {g}, {a});
  const auto expected = grads_of(params);
  zero_grads(params);

  torch::Tensor b = x.clone().requires_grad_(true);
  baton::SplitBackward split({forward(b)}, {b}, params);
  ASSERT_TRUE(split.is_split());
  split.backward_input({g});
  std::vector<int> reports(params.size(), 0);
  split.backward_weight([&](std::size_t id) {
    ASSERT_LT(id, params.size());
    ++reports[id];
    EXPECT_TRUE(torch::allclose(params[id].grad(), expected[id], 1e-5, 1e-6))
        << "parameter " << id << " reported before its gradient was final";
  });
  EXPECT_EQ(reports, std::vector<int>(params.size(), 1));

  // The fallback (the weight also scales the input): I did everything, W reports all.
  zero_grads(params);
  auto shared_forward = [&](const torch::Tensor& in) { return first(in * first->weight.sum()); };
  torch::Tensor c = x.clone().requires_grad_(true);
  baton::SplitBackward fallback({shared_forward(c)}, {c}, first->parameters());
  ASSERT_FALSE(fallback.is_split());
  fallback.backward_input({g});
  std::vector<std::size_t> reported;
  fallback.backward_weight([&](std::size_t id) { reported.push_back(id); });
  EXPECT_EQ(reported, (std::vector<std::size_t>{0, 1}));
}

}  // namespace
