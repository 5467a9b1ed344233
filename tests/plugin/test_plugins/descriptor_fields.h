// Helper for the refused-plugin tests: a descriptor with one field changed from what
// BATON_PLUGIN would declare.
#pragma once

#include "baton/plugin.h"

namespace test_plugins {

inline std::unique_ptr<baton::PluginObject> create_nothing(const baton::ParamValues&) {
  return std::make_unique<baton::PluginObject>();
}

inline baton::PluginDescriptor descriptor_named(const char* name) {
  return baton::PluginDescriptor{sizeof(baton::PluginDescriptor),
                                 BATON_ABI_MAJOR,
                                 BATON_ABI_MINOR,
                                 baton::PluginKind::kSchedule,
                                 name,
                                 "1.0.0",
                                 "refused on purpose",
                                 BATON_PLUGIN_TORCH_VERSION,
                                 BATON_CXX11_ABI,
                                 nullptr,
                                 0,
                                 nullptr,
                                 &create_nothing,
                                 0u,
                                 nullptr,
                                 0u};
}

}  // namespace test_plugins

#define TEST_PLUGIN_ENTRY(NAME, CHANGE)                                            \
  extern "C" __attribute__((visibility("default"))) const baton::PluginDescriptor* \
  baton_plugin_info() {                                                            \
    static const baton::PluginDescriptor descriptor = [] {                         \
      baton::PluginDescriptor d = test_plugins::descriptor_named(NAME);            \
      CHANGE;                                                                      \
      return d;                                                                    \
    }();                                                                           \
    return &descriptor;                                                            \
  }
