// Its file says "test-misnamed" but its descriptor says something else.
#include "descriptor_fields.h"

TEST_PLUGIN_ENTRY("somebody-else", (void)d)
