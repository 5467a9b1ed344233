// Split backward against full backward: forward + I + W versus forward + B on a stack of
// Linear layers, the shape of a transformer stage's weight-heavy work. The split must reuse
// I's work in W (only each layer's local weight gradient is left for W), so the target is
// (I + W) / B <= 1.05. Rounds alternate so that drift on a shared machine hits both; the
// report gives the median of each and the ratio of the medians.
//
//   baton-split-backward-bench [--layers 4] [--width 1024] [--batch 64] [--rounds 7]
//                              [--iterations 10]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "baton/runtime/split_backward.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int layers = 4;
  int width = 1024;
  int batch = 64;
  int rounds = 7;
  int iterations = 10;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (value <= 0) {
      std::fprintf(stderr, "%s needs a positive integer, got '%s'\n", flag.c_str(), argv[i + 1]);
      std::exit(2);
    }
    if (flag == "--layers")
      options.layers = value;
    else if (flag == "--width")
      options.width = value;
    else if (flag == "--batch")
      options.batch = value;
    else if (flag == "--rounds")
      options.rounds = value;
    else if (flag == "--iterations")
      options.iterations = value;
    else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return options;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  torch::manual_seed(0);
  torch::nn::Sequential stack;
  for (int i = 0; i < options.layers; ++i) {
    stack->push_back(torch::nn::Linear(options.width, options.width));
    stack->push_back(torch::nn::Functional(torch::relu));
  }
  const std::vector<torch::Tensor> params = stack->parameters();
  const torch::Tensor x = torch::randn({options.batch, options.width});
  const torch::Tensor grad_out = torch::randn({options.batch, options.width});

  const auto full = [&] {
    torch::Tensor input = x.detach().requires_grad_(true);
    baton::full_backward({stack->forward(input)}, {grad_out}, {input});
  };
  const auto split = [&] {
    torch::Tensor input = x.detach().requires_grad_(true);
    baton::SplitBackward backward({stack->forward(input)}, {input}, params);
    backward.backward_input({grad_out});
    backward.backward_weight();
  };
  const auto time_ms = [&](const std::function<void()>& step) {
    const auto start = Clock::now();
    for (int i = 0; i < options.iterations; ++i) step();
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count() /
           options.iterations;
  };

  full();  // warm-up: allocator, kernels
  split();
  std::vector<double> full_ms, split_ms;
  std::printf("%d x Linear(%d) + ReLU, batch %d, %d iterations per round\n", options.layers,
              options.width, options.batch, options.iterations);
  std::printf("round  forward+B ms  forward+I+W ms  ratio\n");
  for (int round = 0; round < options.rounds; ++round) {
    // Alternate which goes first.
    double f, s;
    if (round % 2 == 0) {
      f = time_ms(full);
      s = time_ms(split);
    } else {
      s = time_ms(split);
      f = time_ms(full);
    }
    full_ms.push_back(f);
    split_ms.push_back(s);
    std::printf("%5d  %12.3f  %14.3f  %5.3f\n", round + 1, f, s, s / f);
  }
  const double ratio = median(split_ms) / median(full_ms);
  std::printf(
      "median: forward+B %.3f ms, forward+I+W %.3f ms, ratio (I+W)/B %.3f (target <= 1.05)\n",
      median(full_ms), median(split_ms), ratio);
  return 0;
}
