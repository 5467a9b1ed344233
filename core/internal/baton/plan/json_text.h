// Internal: the plan layer's JSON spelling (the Chrome trace, `baton plan --format json`).
// The plan layer writes its few JSON documents by hand, to the byte, so that their layout is
// stable and readable in a diff; these keep the escaping in one place.
#pragma once

#include <string>
#include <string_view>

#include "baton/export.h"

namespace baton {

// `text` as a JSON string literal, quotes included.
BATON_API std::string json_quote(std::string_view text);

}  // namespace baton
