// The one lookup of what a transport plugin's object implements (baton/transport_interfaces.h):
// by the descriptor's list, at the highest version the core knows, refusing a list its object
// does not live up to. Objects of each version, and descriptors as each ABI wrote them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>

#include "baton/error.h"
#include "baton/plugin_loader.h"
#include "baton/transport_interfaces.h"

namespace {

using testing::HasSubstr;

// Version 1's functions, doing nothing: the lookup never calls them.
template <typename Interface>
class Stub : public Interface {
 public:
  void connect(const baton::TransportContext&) override {}
  std::unique_ptr<baton::Work> isend(const at::Tensor&, int, std::uint64_t) override {
    return nullptr;
  }
  std::unique_ptr<baton::Work> irecv(const at::Tensor&, int, std::uint64_t) override {
    return nullptr;
  }
  void abort(const std::string&) override {}
};

// Version 1 only: what a plugin built before TransportV2 existed makes.
using VersionOne = Stub<baton::Transport>;

class VersionTwoThatReduces : public Stub<baton::TransportV2>, public baton::AllReduceTransport {
 public:
  baton::Viability supports_device(const c10::Device& device) const override {
    return device.is_cpu() ? baton::Viability::yes() : baton::Viability::no("CPU only");
  }
  int join_group(const std::vector<int>&) override { return 0; }
  std::unique_ptr<baton::Work> iallreduce(int, const std::vector<at::Tensor>&) override {
    return nullptr;
  }
};

baton::PluginDescriptor descriptor_listing(const baton::PluginInterface* list, std::size_t count) {
  baton::PluginDescriptor descriptor{};
  descriptor.struct_size = sizeof(baton::PluginDescriptor);
  descriptor.kind = baton::PluginKind::kTransport;
  descriptor.name = "test";
  descriptor.interfaces = list;
  descriptor.num_interfaces = count;
  return descriptor;
}

std::string refusal(const baton::PluginDescriptor& descriptor, baton::Transport& transport) {
  try {
    baton::transport_interfaces(descriptor, transport);
  } catch (const baton::PluginError& error) {
    return error.what();
  }
  return "no error";
}

TEST(TransportInterfaces, UsesWhatTheListNamesAtTheVersionTheCoreKnows) {
  VersionTwoThatReduces object;
  const baton::PluginInterface all[] = {baton::kTransportInterface, baton::kAllReduceInterface,
                                        baton::kReceivesMatchByTag};
  const auto found = baton::transport_interfaces(descriptor_listing(all, 3), object);
  EXPECT_EQ(found.v2, &object);
  EXPECT_EQ(found.all_reduce, static_cast<baton::AllReduceTransport*>(&object));
  EXPECT_TRUE(found.receives_match_by_tag);
  EXPECT_FALSE(found.v2->supports_device(c10::Device(c10::kCUDA, 0)).viable);
  // A newer version than this core knows: the core uses the newest it knows.
  const baton::PluginInterface newer[] = {{"baton.transport", 7}};
  EXPECT_EQ(baton::transport_interfaces(descriptor_listing(newer, 1), object).v2, &object);
  // What the list leaves out is not used, even where the object has it.
  const baton::PluginInterface first_only[] = {baton::kTransportInterfaceV1};
  const auto listed_v1 = baton::transport_interfaces(descriptor_listing(first_only, 1), object);
  EXPECT_EQ(listed_v1.v2, nullptr);
  EXPECT_EQ(listed_v1.all_reduce, nullptr);
  EXPECT_FALSE(listed_v1.receives_match_by_tag);
}

// A plugin built against ABI 2.0 says what it can do with capability bits; its object is
// version 1 of the transport interface.
TEST(TransportInterfaces, ReadsAnAbi20DescriptorAsVersionOneWithWhatItsBitsSay) {
  VersionOne object;
  baton::PluginDescriptor descriptor = descriptor_listing(nullptr, 0);
  descriptor.struct_size = offsetof(baton::PluginDescriptor, interfaces);
  descriptor.capabilities = baton::kCapabilityReceivesMatchByTag;
  const auto found = baton::transport_interfaces(descriptor, object);
  EXPECT_EQ(found.v2, nullptr);
  EXPECT_EQ(found.all_reduce, nullptr);
  EXPECT_TRUE(found.receives_match_by_tag);
}

TEST(TransportInterfaces, RefusesAListItsObjectDoesNotLiveUpTo) {
  VersionOne object;
  const baton::PluginInterface v2[] = {baton::kTransportInterface};
  EXPECT_THAT(refusal(descriptor_listing(v2, 1), object),
              HasSubstr("transport plugin 'test' lists baton.transport version 2, but its object "
                        "is no baton::TransportV2"));
  const baton::PluginInterface reduces[] = {baton::kTransportInterfaceV1,
                                            baton::kAllReduceInterface};
  EXPECT_THAT(refusal(descriptor_listing(reduces, 2), object),
              HasSubstr("lists baton.all_reduce version 1, but its object is no "
                        "baton::AllReduceTransport"));
  // ABI 2.0's bit, on an object that cannot reduce: refused the same way.
  baton::PluginDescriptor old = descriptor_listing(nullptr, 0);
  old.struct_size = offsetof(baton::PluginDescriptor, interfaces);
  old.capabilities = baton::kCapabilityAllReduce;
  EXPECT_THAT(refusal(old, object), HasSubstr("lists baton.all_reduce version 1"));
}

// The conformance suite's run of the example store transport "built against ABI 2.0" proves
// something only if the file is what a 2.0 build makes: a 2.0 descriptor, which ends before
// the interface list, loaded and created as version 1 of the transport interface.
TEST(TransportInterfaces, TheExampleBuiltAgainstAbi20IsWhatA20BuildMakes) {
  const auto plugin =
      baton::PluginLoader().load(baton::PluginKind::kTransport, BATON_STORE_EXAMPLE_ABI_2_0);
  const baton::PluginDescriptor& descriptor = plugin->descriptor();
  EXPECT_EQ(descriptor.abi_major, 2u);
  EXPECT_EQ(descriptor.abi_minor, 0u);
  EXPECT_EQ(descriptor.struct_size, offsetof(baton::PluginDescriptor, interfaces));
  const auto transport = plugin->create_as<baton::Transport>(baton::ParamValues());
  const auto found = baton::transport_interfaces(descriptor, *transport);
  EXPECT_EQ(found.v2, nullptr);
  EXPECT_EQ(found.all_reduce, nullptr);
  EXPECT_FALSE(found.receives_match_by_tag);
}

}  // namespace
