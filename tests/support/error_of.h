// The message of the exception `body` throws, for tests that check what an error says, not
// only its type: "(nothing thrown)" when it throws nothing, so that a missing error fails the
// test's text check too.
#pragma once

#include <string>

namespace baton_test {

template <typename Error, typename Body>
std::string error_of(Body&& body) {
  try {
    body();
  } catch (const Error& error) {
    return error.what();
  }
  return "(nothing thrown)";
}

}  // namespace baton_test
