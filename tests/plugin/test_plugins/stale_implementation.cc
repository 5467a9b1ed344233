// A plugin implementation that does not match the core it is loaded into: built for a newer
// ABI minor (STAMP_MINOR_AHEAD) or, as before ABI 2.2, with no stamp at all (UNSTAMPED). Its
// exports are written out by hand instead of BATON_PLUGIN_IMPLEMENTATION, to say what the
// macro would not; its factory must never run.
#include <cstdlib>

#include "baton/plugin_implementation.h"

namespace {

std::unique_ptr<baton::PluginObject> make_nothing(const baton::ParamValues&) {
  std::abort();  // the loader must refuse this library before calling its factory
}

}  // namespace

extern "C" __attribute__((visibility("default"))) baton::ImplementationFactory
baton_plugin_implementation_create() {
  return &make_nothing;
}

#ifndef UNSTAMPED
extern "C" __attribute__((visibility("default"))) const baton::ImplementationStamp*
baton_plugin_implementation_stamp() {
  static const baton::ImplementationStamp stamp{BATON_ABI_MAJOR, BATON_ABI_MINOR + 1, nullptr,
                                                BATON_CXX11_ABI};
  return &stamp;
}
#endif
