// A plugin in two files: a small descriptor library and the implementation it loads on
// first use.
//
// Listing plugins (`baton plugins`, `baton config check`) opens every plugin file. A
// transport that links LibTorch makes that cost a second per process, although listing
// needs only the descriptor, the parameter table and the viability check. So a plugin may
// keep those in its plugin file (built without LibTorch) and put the tensor side in a
// second library next to it, which its factory loads:
//
//   // gloo_plugin.cc, in libbaton-transport-gloo.so (no LibTorch)
//   const char kInThisLibrary = 0;  // an address inside the plugin file
//   std::unique_ptr<baton::PluginObject> create(const baton::ParamValues& params) {
//     return baton::create_from_implementation(&kInThisLibrary, "libbaton_gloo_transport.so",
//                                              params);
//   }
//   // gloo_create.cc, in libbaton_gloo_transport.so (LibTorch)
//   BATON_PLUGIN_IMPLEMENTATION(&make_transport)
//
// baton_add_plugin(... IMPLEMENTATION_SOURCES ...) builds both. A plugin in one file
// works as before.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "baton/export.h"
#include "baton/params.h"
#include "baton/plugin.h"

#define BATON_PLUGIN_IMPLEMENTATION_ENTRY_POINT_NAME "baton_plugin_implementation_create"
#define BATON_PLUGIN_IMPLEMENTATION_STAMP_NAME "baton_plugin_implementation_stamp"

namespace baton {

// The implementation's factory: the same contract as PluginDescriptor::create.
using ImplementationFactory = std::unique_ptr<PluginObject> (*)(const ParamValues& params);

// What an implementation library was built with (ABI 2.2), checked against the core before
// its factory is called, as the plugin file's descriptor is: the implementation is a second
// file, and a stale one next to a new plugin file would otherwise run unchecked.
struct ImplementationStamp {
  std::uint32_t abi_major;
  std::uint32_t abi_minor;
  const char* torch_version;  // null for an implementation built without LibTorch
  int cxx11_abi;
};

// Loads `library_file` from the folder of the shared library that contains `anchor` (an
// address inside the plugin file), once per process, and calls its factory. Throws
// PluginError naming the file when it is missing, fails to load, exports no factory, or was
// built for another ABI, LibTorch or C++ ABI than this core (its stamp), or has no stamp.
// The library stays loaded until the process exits: objects it made may live anywhere.
BATON_API std::unique_ptr<PluginObject> create_from_implementation(const void* anchor,
                                                                   const std::string& library_file,
                                                                   const ParamValues& params);

}  // namespace baton

// Exports the implementation library's factory and its stamp. Use once per implementation
// library.
#define BATON_PLUGIN_IMPLEMENTATION(FACTORY)                                                      \
  extern "C" __attribute__((visibility("default"))) ::baton::ImplementationFactory                \
  baton_plugin_implementation_create() {                                                          \
    return FACTORY;                                                                               \
  }                                                                                               \
  extern "C" __attribute__((visibility("default"))) const ::baton::ImplementationStamp*           \
  baton_plugin_implementation_stamp() {                                                           \
    static const ::baton::ImplementationStamp stamp{BATON_ABI_MAJOR, BATON_ABI_MINOR,             \
                                                    BATON_PLUGIN_TORCH_VERSION, BATON_CXX11_ABI}; \
    return &stamp;                                                                                \
  }
