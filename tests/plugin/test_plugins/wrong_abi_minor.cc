// Claims a newer ABI minor than this core's: it may read fields this core's structs do not
// have (TransportContext grew in 2.2), so the loader must refuse it, naming both versions.
#include "descriptor_fields.h"

TEST_PLUGIN_ENTRY("test-abi-minor", d.abi_minor = BATON_ABI_MINOR + 1)
