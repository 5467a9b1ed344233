// Message sizes as people write them on a command line: "1K,64K,1M,16M,64M" (binary
// multiples: 1K = 1024 bytes), and back ("16M") for tables.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace baton_app {

// The largest message the bench accepts: each rank holds a few buffers of this size.
constexpr std::size_t kMaxBenchMessageBytes = std::size_t{1} << 30;

// Parses a comma-separated list of sizes: a positive integer with an optional K, M or G
// suffix (optionally followed by "B" or "iB": 4KiB, 4KB and 4K are all 4096 bytes).
// Throws UsageError naming the offending item.
std::vector<std::size_t> parse_message_sizes(const std::string& text);

// "1K", "64K", "16M", "1G" when the size is an exact multiple; otherwise the byte count.
std::string format_message_size(std::size_t bytes);

}  // namespace baton_app
