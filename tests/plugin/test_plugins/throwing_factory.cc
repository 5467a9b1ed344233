// Loads fine, but its factory throws: the error must name the plugin and keep the reason.
#include <stdexcept>

#include "baton/plugin.h"

namespace {

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues&) {
  throw std::runtime_error("cannot open device /dev/imaginary0");
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kSchedule, "test-throwing", "1.0.0", "Throws in its factory",
             nullptr, nullptr, &create)
