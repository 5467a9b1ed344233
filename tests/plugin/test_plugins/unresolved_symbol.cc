// Needs a symbol nothing provides: dlopen(RTLD_NOW) fails and dlerror() says which.
#include "baton/plugin.h"

extern "C" int baton_test_symbol_that_does_not_exist();

namespace {

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues&) {
  baton_test_symbol_that_does_not_exist();
  return nullptr;
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kSchedule, "test-unresolved", "1.0.0", "Cannot be loaded", nullptr,
             nullptr, &create)
