// escape.cpp — see escape.h.
#include "reports/format/escape.h"

namespace ddpbench::reports {
namespace {

bool alnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Appends the entity of one of HTML's and XML's three markup characters (& < >), which Markdown
// and XML escape alike; false for any other character.
bool append_markup_entity(char c, std::string& out) {
  switch (c) {
    case '&':
      out += "&amp;";
      return true;
    case '<':
      out += "&lt;";
      return true;
    case '>':
      out += "&gt;";
      return true;
    default:
      return false;
  }
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
    if (append_markup_entity(c, out)) continue;
    switch (c) {
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

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (append_markup_entity(c, out)) continue;
    switch (c) {
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 has no character for the C0 controls but tab, LF and CR, not even as a
        // reference: one in a report's string would make the whole file unparseable.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace ddpbench::reports
