// The plugin ABI: the one surface third-party plugins compile against and the only thing
// the core reads from a shared library before trusting it.
//
// A plugin exports exactly one C symbol, `baton_plugin_info`, returning a descriptor. The
// loader reads the fixed leading fields (struct size, ABI major/minor) first, refuses a
// plugin built for another ABI major, another plugin kind or another `_GLIBCXX_USE_CXX11_ABI`
// (and a transport or validator built against another LibTorch), and only then calls the
// factory. Because the C++ ABI (and, where tensors cross, the LibTorch version) must match,
// C++ types (std::string, std::unique_ptr, at::Tensor) may cross the boundary through the
// factory and the interfaces it returns.
//
// This header needs no LibTorch: a schedule plugin builds with the plan layer alone.
//
// Stability: within one ABI major, fields are only appended (minor bumps) and existing
// fields keep their meaning — in the descriptor and in every struct that crosses the
// boundary (TransportContext's `device`: 2.2). A plugin built for an older minor keeps
// loading; one built for a newer minor than the core's is refused (it may read fields the
// core's structs do not have). An interface (baton::Transport, ...) never changes once
// released: new functions come in a new interface version (a class of its own, derived from
// the previous one), which a plugin lists in its descriptor; the core uses the highest
// version it knows of those listed. See docs/plugin-abi.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "baton/export.h"
#include "baton/params.h"

#define BATON_ABI_MAJOR 2
#define BATON_ABI_MINOR 2

#define BATON_PLUGIN_ENTRY_POINT baton_plugin_info
#define BATON_PLUGIN_ENTRY_POINT_NAME "baton_plugin_info"

// The LibTorch version a plugin was built against. The tensor-side SDK headers (stage.h,
// transport.h, validator.h, via plugin_torch_version.h) set it to TORCH_VERSION; a schedule
// plugin never sees a tensor and records none. Expanded where BATON_PLUGIN is used, so the
// order of includes does not matter.
#ifndef BATON_PLUGIN_TORCH_VERSION
#define BATON_PLUGIN_TORCH_VERSION nullptr
#endif

#if defined(_GLIBCXX_USE_CXX11_ABI)
#define BATON_CXX11_ABI _GLIBCXX_USE_CXX11_ABI
#else
#define BATON_CXX11_ABI -1
#endif

namespace baton {

enum class PluginKind : std::uint32_t {
  kSchedule = 1,
  kTransport = 2,
  kValidator = 3,
};

BATON_API const char* plugin_kind_name(PluginKind kind);

// Can this plugin run on this machine? A transport whose hardware or library is absent
// says why (e.g. "no CUDA device visible: cudaGetDeviceCount returned 0").
struct Viability {
  bool viable = true;
  std::string reason;  // empty when viable

  static Viability yes() { return {}; }
  static Viability no(std::string why) { return {false, std::move(why)}; }
};

// Base of every object a plugin factory creates. Kind-specific interfaces
// (baton::Schedule, baton::Transport, baton::Validator) derive from it.
class BATON_API PluginObject {
 public:
  virtual ~PluginObject();  // defined in the core: one typeinfo for dynamic_cast
};

// An interface a plugin's object implements, at a version: a version holds every function
// of the earlier ones (its class derives from theirs), so a plugin lists each interface once,
// at the highest version it implements. The core asks for the highest version it knows and
// falls back to the ones below, so a plugin built against an older SDK keeps working (one
// built against a newer SDK than the core's is refused: see BATON_ABI_MINOR). Listed in the
// descriptor (ABI 2.1), so `baton plugins` and `baton config check` know what a plugin offers
// without creating it.
struct PluginInterface {
  const char* name;  // "baton.transport"
  std::uint32_t version;
};

// The interfaces of this SDK, each at its newest version. A name that is not an interface
// class is a promise about one (baton.receives_match_by_tag: see below).
inline constexpr PluginInterface kScheduleInterface{"baton.schedule", 1};
inline constexpr PluginInterface kValidatorInterface{"baton.validator", 1};
// baton::Transport is version 1; baton::TransportV2 (version 2) adds supports_device().
inline constexpr PluginInterface kTransportInterfaceV1{"baton.transport", 1};
inline constexpr PluginInterface kTransportInterface{"baton.transport", 2};
// The object is also a baton::AllReduceTransport (baton/all_reduce.h): it can run
// world.data_parallel > 1, tied weights across ranks and gradient clipping across stages.
inline constexpr PluginInterface kAllReduceInterface{"baton.all_reduce", 1};
// The object is also a baton::ShardCollectiveTransport (baton/shard_collectives.h):
// reduce-scatter and all-gather over the all-reduce's groups, for a sharded optimizer.
inline constexpr PluginInterface kShardCollectivesInterface{"baton.shard_collectives", 1};
// The transport matches messages to receives by (peer, tag), never by posting order, and a
// posted receive holds nothing else up (no stream, no queue behind it). The executor then
// posts a step's receives ahead of the plan, from the rank's first communication of the step
// on, as soon as a receive buffer is free for each, so a sender seldom waits for its peer to
// reach the matching RECV. Gloo and UCX declare it; NCCL, which matches by order on a stream,
// must not.
inline constexpr PluginInterface kReceivesMatchByTag{"baton.receives_match_by_tag", 1};

// ABI 2.0's way of saying two of the above, kept so that a 2.0 plugin loads as it did:
// the loader reads these bits only from a descriptor without an interface list.
enum PluginCapability : std::uint32_t {
  kCapabilityAllReduce = 1u << 0,           // = kAllReduceInterface
  kCapabilityReceivesMatchByTag = 1u << 1,  // = kReceivesMatchByTag
};

// The descriptor. Leading fields up to `kind` are frozen across every ABI version.
struct PluginDescriptor {
  std::uint32_t struct_size;  // sizeof(PluginDescriptor) in the plugin's build
  std::uint32_t abi_major;
  std::uint32_t abi_minor;
  PluginKind kind;
  const char* name;           // "gloo", "1f1b"
  const char* version;        // the plugin's own version, "1.0.0"
  const char* description;    // one line for `baton plugins`
  const char* torch_version;  // null for a plugin built without LibTorch (schedules)
  int cxx11_abi;              // _GLIBCXX_USE_CXX11_ABI of the plugin's build, -1 if not libstdc++
  const ParamSpec* params;    // the plugin's parameter table
  std::size_t num_params;
  // Whether the plugin can run here. May be null: always viable.
  Viability (*viability)();
  // Creates the object implementing the kind's interface; `params` were validated against
  // the table above. May throw baton::Error (or anything); the loader wraps it.
  std::unique_ptr<PluginObject> (*create)(const ParamValues& params);
  // ABI 1.1: PluginCapability bits (a 1.0 descriptor ends before them). Read only when the
  // descriptor has no interface list below.
  std::uint32_t capabilities;
  // ABI 2.1: the interfaces the plugin's object implements, each once, at its highest version
  // (BATON_PLUGIN_WITH_INTERFACES). Null (BATON_PLUGIN, or a descriptor from before 2.1):
  // its kind's interface at version 1, and what `capabilities` says.
  const PluginInterface* interfaces;
  std::size_t num_interfaces;
};

// What the plugin declares it implements: its interface list, or for a descriptor without one
// (BATON_PLUGIN, or built before ABI 2.1), its kind's interface at version 1 and the
// interfaces its capability bits stand for.
BATON_API std::vector<PluginInterface> plugin_interfaces(const PluginDescriptor& descriptor);

// The version of the interface called `name` the plugin declares; 0 when it declares none.
BATON_API std::uint32_t interface_version(const PluginDescriptor& descriptor, const char* name);

// Whether the plugin declares `wanted`: that interface at its version or a later one.
inline bool declares(const PluginDescriptor& descriptor, const PluginInterface& wanted) {
  return interface_version(descriptor, wanted.name) >= wanted.version;
}

// ABI 2.0's question, kept so that a plugin built against it and calling it still loads (the
// symbol stays in the runtime): the PluginCapability bits of what the plugin declares, read
// from its interface list when it has one. New code asks declares().
[[deprecated(
    "ask baton::declares(descriptor, baton::kAllReduceInterface) instead")]] BATON_API std::uint32_t
plugin_capabilities(const PluginDescriptor& descriptor);

// The interface kind `kind` objects implement (baton.schedule, baton.transport, ...).
BATON_API const char* kind_interface_name(PluginKind kind);

template <std::size_t N>
constexpr std::size_t interface_table_size(const PluginInterface (&)[N]) {
  return N;
}

}  // namespace baton

// Declares the plugin's entry point. Use once per shared library:
//   BATON_PLUGIN(baton::PluginKind::kSchedule, "1f1b", "1.0.0", "One forward, one backward",
//                kParams /* or nullptr */, &viability /* or nullptr */, &create);
// declares the kind's interface at version 1. BATON_PLUGIN_WITH_INTERFACES lists what the
// object implements instead:
//   const baton::PluginInterface kInterfaces[] = {baton::kTransportInterface,
//                                                 baton::kAllReduceInterface};
//   BATON_PLUGIN_WITH_INTERFACES(baton::PluginKind::kTransport, "mine", "1.0.0", "...",
//                                kParams, &viability, &create, kInterfaces);
// (BATON_PLUGIN_WITH_CAPABILITIES, ABI 1.1's, still builds: its bits are read as above.)
#define BATON_PLUGIN(KIND, NAME, VERSION, DESCRIPTION, PARAMS, VIABILITY, CREATE)           \
  BATON_PLUGIN_DESCRIPTOR_(KIND, NAME, VERSION, DESCRIPTION, PARAMS, VIABILITY, CREATE, 0u, \
                           nullptr, 0u)
#define BATON_PLUGIN_WITH_INTERFACES(KIND, NAME, VERSION, DESCRIPTION, PARAMS, VIABILITY, CREATE, \
                                     INTERFACES)                                                  \
  BATON_PLUGIN_DESCRIPTOR_(KIND, NAME, VERSION, DESCRIPTION, PARAMS, VIABILITY, CREATE, 0u,       \
                           INTERFACES, ::baton::interface_table_size(INTERFACES))
#define BATON_PLUGIN_WITH_CAPABILITIES(KIND, NAME, VERSION, DESCRIPTION, PARAMS, VIABILITY, \
                                       CREATE, CAPABILITIES)                                \
  BATON_PLUGIN_DESCRIPTOR_(KIND, NAME, VERSION, DESCRIPTION, PARAMS, VIABILITY, CREATE,     \
                           CAPABILITIES, nullptr, 0u)
#define BATON_PLUGIN_DESCRIPTOR_(KIND, NAME, VERSION, DESCRIPTION, PARAMS, VIABILITY, CREATE,   \
                                 CAPABILITIES, INTERFACES, NUM_INTERFACES)                      \
  extern "C" __attribute__((visibility("default"))) const ::baton::PluginDescriptor*            \
  BATON_PLUGIN_ENTRY_POINT() {                                                                  \
    static const ::baton::PluginDescriptor descriptor{sizeof(::baton::PluginDescriptor),        \
                                                      BATON_ABI_MAJOR,                          \
                                                      BATON_ABI_MINOR,                          \
                                                      KIND,                                     \
                                                      NAME,                                     \
                                                      VERSION,                                  \
                                                      DESCRIPTION,                              \
                                                      BATON_PLUGIN_TORCH_VERSION,               \
                                                      BATON_CXX11_ABI,                          \
                                                      PARAMS,                                   \
                                                      ::baton::param_table_size(PARAMS),        \
                                                      VIABILITY,                                \
                                                      CREATE,                                   \
                                                      static_cast<std::uint32_t>(CAPABILITIES), \
                                                      INTERFACES,                               \
                                                      NUM_INTERFACES};                          \
    return &descriptor;                                                                         \
  }
