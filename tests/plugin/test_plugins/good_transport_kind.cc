// A loadable plugin of the transport kind, not viable here: proves kind checks and the
// viability report.
#include "baton/plugin.h"
#include "baton/plugin_torch_version.h"  // a transport records its LibTorch

namespace {

baton::Viability viability() {
  return baton::Viability::no("test hardware is absent");
}

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues&) {
  return std::make_unique<baton::PluginObject>();
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kTransport, "test-other-good", "0.1.0", "A transport-kind plugin",
             nullptr, &viability, &create)
