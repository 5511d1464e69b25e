// quoted_input.h — how an error message echoes text the user typed (a scenario name, a path, a
// fault's tensor): in single quotes, control bytes (ANSI escapes, newlines) shown as \xNN so they
// cannot drive the terminal or split the one-line error contract, and long text cut to its first
// 80 bytes with the full length said, so a 100 KB argument cannot flood the screen.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace ddpbench {

// A whole message as the terminal gets it: control bytes as \xNN and at most `limit` bytes. The
// last line of defence for text that reaches stderr from elsewhere (CLI11 echoes a bad value
// as it came; a library message may carry a file's bytes).
inline std::string printable_message(std::string_view text, size_t limit = 1000) {
  std::string out;
  for (size_t i = 0; i < text.size() && out.size() < limit; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (out.size() >= limit) out += "... (cut)";
  return out;
}

inline std::string quoted_input(std::string_view text) {
  constexpr size_t kShown = 80;
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kShown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f || c == '\\' || c == '\'') {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += "'";
  if (text.size() > kShown) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace ddpbench
