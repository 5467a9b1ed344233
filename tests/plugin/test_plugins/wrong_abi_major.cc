// Claims a future ABI major: the loader must refuse it before reading anything else.
#include "descriptor_fields.h"

TEST_PLUGIN_ENTRY("test-abi-major", d.abi_major = BATON_ABI_MAJOR + 1)
