// The NCCL transport. Here (no GPU, CPU-only LibTorch) only the refusal is testable: the
// plugin loads, says it is not viable and why, and refuses to create a transport with that
// reason. The GPU tests run on a machine with >= 2 GPUs and a CUDA-enabled LibTorch, and
// skip elsewhere with the reason.
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "baton/error.h"
#include "transport_group.h"

namespace baton_test {
namespace {

using std::chrono::milliseconds;

std::shared_ptr<baton::LoadedPlugin> load_nccl() {
  return baton::PluginLoader().load(baton::PluginKind::kTransport, "nccl");
}

int cuda_devices() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

TEST(NcclPlugin, LoadsThroughTheLoaderWithItsParameters) {
  auto plugin = load_nccl();
  EXPECT_EQ(plugin->name(), "nccl");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < plugin->descriptor().num_params; ++i) {
    names.push_back(plugin->descriptor().params[i].name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"timeout_s", "device"}));
}

TEST(NcclPlugin, WithoutAGpuIsNotViableAndSaysWhy) {
  if (cuda_devices() > 0) GTEST_SKIP() << "this machine has a CUDA device";
  const baton::Viability viability = load_nccl()->viability();
  EXPECT_FALSE(viability.viable);
  EXPECT_EQ(viability.reason.rfind("no CUDA device visible: cudaGetDeviceCount returned ", 0), 0u)
      << viability.reason;
}

TEST(NcclPlugin, WithoutAGpuCreateRefusesWithTheSameReason) {
  if (cuda_devices() > 0) GTEST_SKIP() << "this machine has a CUDA device";
  auto plugin = load_nccl();
  const std::string reason = plugin->viability().reason;
  try {
    plugin->create(plugin_params(*plugin));
    ADD_FAILURE() << "create() succeeded without a GPU";
  } catch (const baton::PluginError& error) {
    EXPECT_NE(std::string(error.what()).find("nccl: " + reason), std::string::npos) << error.what();
  }
}

TEST(NcclPlugin, RejectsABadDeviceParameter) {
  auto plugin = load_nccl();
  try {
    plugin->create(plugin_params(*plugin, {{"device", "-5"}}));
    ADD_FAILURE() << "device = -5 was accepted";
  } catch (const baton::Error& error) {
    EXPECT_NE(std::string(error.what()).find("device must be -1 or a CUDA device index, got -5"),
              std::string::npos)
        << error.what();
  }
}

// ---- On GPUs ------------------------------------------------------------------------------

class NcclOnGpus : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!at::hasCUDA()) GTEST_SKIP() << "LibTorch here is built without CUDA";
    if (cuda_devices() < 2)
      GTEST_SKIP() << "needs 2 CUDA devices, " << cuda_devices() << " visible";
    group_ = connect_group("nccl", 2, {}, milliseconds(60000));
  }

  static at::Tensor on(int device, const at::Tensor& tensor) {
    return tensor.to(at::Device(at::kCUDA, static_cast<at::DeviceIndex>(device)));
  }

  std::unique_ptr<TransportGroup> group_;
};

TEST_F(NcclOnGpus, SizesFromZeroTo64MiBArriveIntact) {
  for (const std::int64_t bytes : {0LL, 1LL, 4096LL, 1LL << 20, 64LL << 20}) {
    const at::Tensor host = at::randint(0, 256, {bytes}, at::kByte);
    at::Tensor received = on(1, at::zeros({bytes}, at::kByte));
    auto recv = (*group_)[1].irecv(received, 0, 1);
    (*group_)[0].isend(on(0, host), 1, 1)->wait(milliseconds(20000));
    recv->wait(milliseconds(20000));
    EXPECT_TRUE(at::equal(received.cpu(), host)) << bytes << " bytes";
  }
}

TEST_F(NcclOnGpus, BatchSendsAndReceivesBothWaysWithoutDeadlock) {
  const at::Tensor a = at::randn({1 << 20});
  const at::Tensor b = at::randn({1 << 20});
  at::Tensor at_zero = on(0, at::zeros({1 << 20}));
  at::Tensor at_one = on(1, at::zeros({1 << 20}));
  std::vector<std::unique_ptr<baton::Work>> works;
  std::thread other([&] {
    auto batch = (*group_)[1].post_batch(
        {{baton::P2PDirection::kSend, on(1, b), 0, 2}, {baton::P2PDirection::kRecv, at_one, 0, 2}});
    for (auto& work : batch) work->wait(milliseconds(20000));
  });
  auto batch = (*group_)[0].post_batch(
      {{baton::P2PDirection::kSend, on(0, a), 1, 2}, {baton::P2PDirection::kRecv, at_zero, 1, 2}});
  for (auto& work : batch) work->wait(milliseconds(20000));
  other.join();
  EXPECT_TRUE(at::equal(at_zero.cpu(), b));
  EXPECT_TRUE(at::equal(at_one.cpu(), a));
}

TEST_F(NcclOnGpus, RejectsCpuTensorsNamingTheDevice) {
  try {
    (*group_)[0].isend(at::zeros({4}), 1, 3);
    ADD_FAILURE() << "a CPU tensor was accepted";
  } catch (const baton::TransportError& error) {
    EXPECT_NE(std::string(error.what()).find("the NCCL transport moves CUDA tensors only"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(NcclOnGpus, TimeoutAbortsTheCommunicatorAndSaysSo) {
  auto recv = (*group_)[0].irecv(on(0, at::zeros({1024}, at::kByte)), 1, 0x77);
  try {
    recv->wait(milliseconds(500));
    ADD_FAILURE() << "a receive nobody sent completed";
  } catch (const baton::TransportError& error) {
    const std::string text = error.what();
    EXPECT_NE(text.find("rank 0: recv from rank 1 (tag 0x77, 1024 bytes) timed out after 0.5 s"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("communicator was aborted"), std::string::npos) << text;
  }
  EXPECT_THROW((*group_)[0].isend(on(0, at::zeros({4})), 1, 1), baton::TransportError);
}

}  // namespace
}  // namespace baton_test
