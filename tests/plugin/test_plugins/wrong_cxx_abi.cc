// Claims the other _GLIBCXX_USE_CXX11_ABI setting.
#include "descriptor_fields.h"

TEST_PLUGIN_ENTRY("test-cxx-abi", d.cxx11_abi = BATON_CXX11_ABI == 1 ? 0 : 1)
