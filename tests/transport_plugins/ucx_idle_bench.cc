// What a connected but idle UCX transport costs a rank that computes.
//
// A stage-like compute loop (float32 matmuls, like a Linear layer's forward) is timed with
// no transport in the process ("absent"), then with a UCX transport connected to a peer and
// idle ("idle"), then idle with one receive posted that no one answers ("pending", what a
// pipeline rank looks like while it computes ahead of its next activation). The three
// alternate for several rounds so that drift on a shared machine hits all of them; the
// report gives each round, the median slowdown, the slowdown between the fastest run of each
// kind, and the CPU time the progress threads used.
//
// The peer is a second rank inside this process (its progress thread is idle as well), so
// this measures two idle progress threads against one computing loop: a stricter setup
// than one rank per process.
//
//   baton-ucx-idle-bench [--rounds 5] [--seconds 1.5] [--size 256] [--threads 0]
//   (UCX_TLS is honoured; --threads 0 keeps LibTorch's default intra-op thread count)
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "thread_cpu.h"
#include "transport_group.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int rounds = 5;
  double seconds = 1.5;
  std::int64_t size = 256;
  int threads = 0;
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "missing value after %s\n", flag.c_str());
      std::exit(2);
    }
    const char* value = argv[++i];
    if (flag == "--rounds") {
      options.rounds = std::max(1, std::atoi(value));
    } else if (flag == "--seconds") {
      options.seconds = std::max(0.1, std::atof(value));
    } else if (flag == "--size") {
      options.size = std::max<std::int64_t>(16, std::atoll(value));
    } else if (flag == "--threads") {
      options.threads = std::max(0, std::atoi(value));
    } else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return options;
}

// The "stage": `iterations` matmuls chained through a tanh, so nothing is optimized away.
double compute(const at::Tensor& weight, at::Tensor& activation, int iterations) {
  const auto start = Clock::now();
  for (int i = 0; i < iterations; ++i) activation = at::tanh(at::matmul(activation, weight));
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  if (options.threads > 0) at::set_num_threads(options.threads);
  at::manual_seed(0);
  const at::Tensor weight = at::randn({options.size, options.size}) / 16.0;
  at::Tensor activation = at::randn({options.size, options.size});

  // Calibrate the iteration count to about --seconds per measurement.
  compute(weight, activation, 3);
  const double one = compute(weight, activation, 5) / 5;
  const int iterations = std::max(1, static_cast<int>(options.seconds / one));
  const char* tls = std::getenv("UCX_TLS");
  std::printf(
      "matmul %lldx%lld float32, %d iterations per measurement, %d intra-op threads, "
      "UCX_TLS=%s\n",
      static_cast<long long>(options.size), static_cast<long long>(options.size), iterations,
      at::get_num_threads(), tls != nullptr ? tls : "(unset)");
  std::printf("%-6s %10s %10s %10s %9s %9s %16s %16s\n", "round", "absent_s", "idle_s", "pending_s",
              "idle_%", "pending_%", "idle_thread_us", "pending_thread_us");

  double best_absent = 1e30;
  double best_idle = 1e30;
  double best_pending = 1e30;
  std::vector<double> idle_slowdown;
  std::vector<double> pending_slowdown;
  std::vector<double> idle_thread_us;
  std::vector<double> pending_thread_us;
  for (int round = 0; round < options.rounds; ++round) {
    const double absent = compute(weight, activation, iterations);

    auto group = baton_test::connect_group("ucx", 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // past the poll windows
    auto cpu_before = baton_test::thread_cpu_time("baton-ucx");
    const double idle = compute(weight, activation, iterations);
    const auto idle_cpu = baton_test::thread_cpu_time("baton-ucx") - cpu_before;

    at::Tensor slot = at::empty({1024}, at::kFloat);
    auto pending = (*group)[0].irecv(slot, 1, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cpu_before = baton_test::thread_cpu_time("baton-ucx");
    const double with_pending = compute(weight, activation, iterations);
    const auto pending_cpu = baton_test::thread_cpu_time("baton-ucx") - cpu_before;
    (*group)[1].isend(at::zeros({1024}, at::kFloat), 0, 1)->wait(std::chrono::seconds(20));
    pending->wait(std::chrono::seconds(20));
    pending.reset();  // Works go before their transport and its plugin
    group.reset();

    best_absent = std::min(best_absent, absent);
    best_idle = std::min(best_idle, idle);
    best_pending = std::min(best_pending, with_pending);
    idle_slowdown.push_back((idle / absent - 1) * 100);
    pending_slowdown.push_back((with_pending / absent - 1) * 100);
    idle_thread_us.push_back(static_cast<double>(idle_cpu.count()) / 1000);
    pending_thread_us.push_back(static_cast<double>(pending_cpu.count()) / 1000);
    std::printf("%-6d %10.3f %10.3f %10.3f %+9.2f %+9.2f %16.0f %16.0f\n", round, absent, idle,
                with_pending, idle_slowdown.back(), pending_slowdown.back(), idle_thread_us.back(),
                pending_thread_us.back());
    std::fflush(stdout);
  }
  std::printf(
      "median slowdown: idle %+.2f %%, with a pending receive %+.2f %%; median progress "
      "thread CPU per measurement: idle %.0f us, pending %.0f us\n",
      median(idle_slowdown), median(pending_slowdown), median(idle_thread_us),
      median(pending_thread_us));
  // The fastest run of each kind is the one least disturbed by other load on the machine.
  std::printf("fastest runs: absent %.3f s, idle %.3f s (%+.2f %%), pending %.3f s (%+.2f %%)\n",
              best_absent, best_idle, (best_idle / best_absent - 1) * 100, best_pending,
              (best_pending / best_absent - 1) * 100);
  return 0;
}
