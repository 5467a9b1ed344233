// Text for SVG (XML) documents the apps write: the trace's picture, the benches' charts.
#pragma once

#include <string>

namespace baton_app {

// `text` with the characters XML reserves written as entities, safe in element text and in
// a double-quoted attribute.
inline std::string escape_xml(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace baton_app
