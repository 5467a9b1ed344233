// baton/plugin.h as ABI 2.0 shipped it (git show 12f43f5:core/include/baton/plugin.h), kept
// unchanged so that a plugin can be built here as one built against that SDK was: its
// descriptor ends before ABI 2.1's interface list. Only tests/transport/CMakeLists.txt uses it.
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
// fields keep their meaning. See docs/plugin-abi.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "baton/export.h"
#include "baton/params.h"

#define BATON_ABI_MAJOR 2
#define BATON_ABI_MINOR 0

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

// What a plugin can do beyond its kind's interface, declared in its descriptor so that
// `baton plugins` and `baton config check` know without loading its implementation.
enum PluginCapability : std::uint32_t {
  // A transport whose object is also a baton::AllReduceTransport (baton/all_reduce.h): it can
  // run world.data_parallel > 1.
  kCapabilityAllReduce = 1u << 0,
  // A transport that matches messages to receives by (peer, tag), never by posting order,
  // and whose posted receive holds nothing else up (no stream, no queue behind it). The
  // executor then posts a step's receives ahead of the plan, from the rank's first
  // communication of the step on, as soon as a receive buffer is free for each, so a sender
  // seldom waits for its peer to reach the matching RECV. Gloo and UCX declare it; NCCL,
  // which matches by order on a stream, must not.
  kCapabilityReceivesMatchByTag = 1u << 1,
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
  // ABI 1.1: PluginCapability bits. Read it with plugin_capabilities(): a 1.0 descriptor
  // ends before it.
  std::uint32_t capabilities;
};

// The descriptor's capabilities; 0 for a descriptor from before they existed (ABI 1.0).
BATON_API std::uint32_t plugin_capabilities(const PluginDescriptor& descriptor);

}  // namespace baton

// Declares the plugin's entry point. Use once per shared library:
//   BATON_PLUGIN(baton::PluginKind::kSchedule, "1f1b", "1.0.0", "One forward, one backward",
//                kParams /* or nullptr */, &viability /* or nullptr */, &create);
// BATON_PLUGIN_WITH_CAPABILITIES adds PluginCapability bits (baton::kCapabilityAllReduce |
// baton::kCapabilityReceivesMatchByTag).
#define BATON_PLUGIN(KIND, NAME, VERSION, DESCRIPTION, PARAMS, VIABILITY, CREATE) \
  BATON_PLUGIN_WITH_CAPABILITIES(KIND, NAME, VERSION, DESCRIPTION, PARAMS, VIABILITY, CREATE, 0u)
#define BATON_PLUGIN_WITH_CAPABILITIES(KIND, NAME, VERSION, DESCRIPTION, PARAMS, VIABILITY,      \
                                       CREATE, CAPABILITIES)                                     \
  extern "C" __attribute__((visibility("default"))) const ::baton::PluginDescriptor*             \
  BATON_PLUGIN_ENTRY_POINT() {                                                                   \
    static const ::baton::PluginDescriptor descriptor{sizeof(::baton::PluginDescriptor),         \
                                                      BATON_ABI_MAJOR,                           \
                                                      BATON_ABI_MINOR,                           \
                                                      KIND,                                      \
                                                      NAME,                                      \
                                                      VERSION,                                   \
                                                      DESCRIPTION,                               \
                                                      BATON_PLUGIN_TORCH_VERSION,                \
                                                      BATON_CXX11_ABI,                           \
                                                      PARAMS,                                    \
                                                      ::baton::param_table_size(PARAMS),         \
                                                      VIABILITY,                                 \
                                                      CREATE,                                    \
                                                      static_cast<std::uint32_t>(CAPABILITIES)}; \
    return &descriptor;                                                                          \
  }
