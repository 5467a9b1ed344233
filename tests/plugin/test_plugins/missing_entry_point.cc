// A shared library that is not a baton plugin: it exports no baton_plugin_info. Its static
// constructor leaves a file behind (BATON_TEST_CONSTRUCTOR_MARKER), so a test can tell
// whether the loader ran any of its code before refusing it.
#include <cstdlib>
#include <fstream>

namespace {

const bool kConstructorRan = [] {
  if (const char* marker = std::getenv("BATON_TEST_CONSTRUCTOR_MARKER")) {
    std::ofstream(marker) << "the static constructor ran\n";
  }
  return true;
}();

}  // namespace

extern "C" __attribute__((visibility("default"))) int some_other_function() {
  return kConstructorRan ? 42 : 0;
}
