// markdown_escape.cpp — see markdown_escape.h.
#include "reports/markdown_escape.h"

namespace ddpbench::reports {
namespace {

bool alnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

}  // namespace

std::string markdown_escape(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += ' ';
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '\\':
      case '`':
      case '*':
      case '[':
      case ']':
      case '#':
      case '|':
      case '~':
      case '$':
        out += '\\';
        out += c;
        break;
      case '_': {
        const bool inside_word =
            i > 0 && i + 1 < value.size() && alnum(value[i - 1]) && alnum(value[i + 1]);
        if (!inside_word) out += '\\';
        out += c;
        break;
      }
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace ddpbench::reports
