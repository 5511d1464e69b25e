// basic_english.h — torchtext's get_tokenizer("basic_english"): lowercase, then, in this order,
// ' -> " '  ", " removed, . -> " . ", "<br />" -> " ", , ( ) ! ? set apart by spaces, ; and :
// -> " ", and a split on whitespace. The text is UTF-8 bytes; lowercasing covers ASCII and
// Latin-1 capitals (U+00C0..U+00DE), whitespace covers ASCII's (Python's str.split also splits at
// \x1c..\x1f), U+0085 and U+00A0. Other non-ASCII capitals and spaces, rare in aclImdb, are left
// as they are where Python's Unicode-aware lower()/split() would change them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ddpbench::data {

std::vector<std::string> basic_english_tokenize(std::string_view text);

}  // namespace ddpbench::data
