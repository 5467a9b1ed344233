// Symbol visibility. Everything is built with -fvisibility=hidden; the core's public API
// and the interfaces plugins derive from are exported explicitly.
#pragma once

#define BATON_API __attribute__((visibility("default")))
