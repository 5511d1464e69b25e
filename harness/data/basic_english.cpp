// basic_english.cpp — see basic_english.h. Each rule is a plain substring replacement over the
// whole text, applied in torchtext's order (the order matters: "<br />" is replaced after "."
// has been set apart, which it does not contain).
#include "data/basic_english.h"

#include <utility>

namespace ddpbench::data {
namespace {

void lowercase(std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 'A' && c <= 'Z') {
      s[i] = static_cast<char>(c + ('a' - 'A'));
    } else if (c == 0xC3 && i + 1 < s.size()) {
      // U+00C0..U+00DE except U+00D7 (multiplication sign): lowercase is +0x20.
      const auto next = static_cast<unsigned char>(s[i + 1]);
      if (next >= 0x80 && next <= 0x9E && next != 0x97) s[i + 1] = static_cast<char>(next + 0x20);
      ++i;
    }
  }
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  for (size_t hit = s.find(from); hit != std::string::npos; hit = s.find(from, pos)) {
    out.append(s, pos, hit - pos);
    out.append(to);
    pos = hit + from.size();
  }
  out.append(s, pos, std::string::npos);
  s = std::move(out);
}

// Length of the whitespace character starting at s[i], 0 when there is none.
size_t whitespace_at(const std::string& s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1C && c <= 0x1F)) return 1;
  if (c == 0xC2 && i + 1 < s.size()) {
    const auto next = static_cast<unsigned char>(s[i + 1]);
    if (next == 0x85 || next == 0xA0) return 2;
  }
  return 0;
}

}  // namespace

std::vector<std::string> basic_english_tokenize(std::string_view text) {
  std::string s(text);
  lowercase(s);
  // torchtext's _patterns / _replacements, in order. Its final \s+ -> " " only merges
  // whitespace, which the split below does anyway.
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {"'", " '  "}, {"\"", ""},   {".", " . "}, {"<br />", " "}, {",", " , "}, {"(", " ( "},
      {")", " ) "},  {"!", " ! "}, {"?", " ? "}, {";", " "},      {":", " "},
  };
  for (const auto& [from, to] : kRules) replace_all(s, from, to);
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < s.size()) {
    if (const size_t w = whitespace_at(s, i); w > 0) {
      i += w;
      continue;
    }
    size_t end = i;
    while (end < s.size() && whitespace_at(s, end) == 0) ++end;
    tokens.emplace_back(s, i, end - i);
    i = end;
  }
  return tokens;
}

}  // namespace ddpbench::data
