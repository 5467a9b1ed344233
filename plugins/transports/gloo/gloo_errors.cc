#include "gloo_errors.h"

#include "baton/all_reduce.h"

namespace baton_gloo {

namespace {

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

// GLOO_ERROR_MSG prefixes "[file:line] "; the location means nothing to a user.
std::string without_location(const std::string& text) {
  if (!text.empty() && text[0] == '[') {
    const std::size_t end = text.find("] ");
    if (end != std::string::npos) return text.substr(end + 2);
  }
  return text;
}

}  // namespace

std::string explain_gloo_error(const std::exception& error, int peer) {
  return explain_gloo_error(error, "peer rank " + std::to_string(peer));
}

std::string explain_gloo_error(const std::exception& error, const std::string& who) {
  const std::string text = without_location(error.what());
  if (contains(text, "Connection closed by peer") || contains(text, "Socket closed")) {
    return who + " closed the connection";
  }
  if (contains(text, "Connection reset by peer") || contains(text, "Broken pipe")) {
    return who + " closed the connection (" + text + ")";
  }
  return "gloo: " + text;
}

std::string other_members(const std::vector<int>& ranks, int rank) {
  if (ranks.size() == 2) {
    return "peer rank " + std::to_string(ranks[0] == rank ? ranks[1] : ranks[0]);
  }
  return "a member of group " + baton::format_group(ranks);
}

}  // namespace baton_gloo
