// vocabulary.cpp — see vocabulary.h.
#include "data/vocabulary.h"

#include <algorithm>
#include <utility>

namespace ddpbench::data {

Vocabulary::Vocabulary(const Counts& counts, int64_t min_freq, int64_t max_tokens) {
  std::vector<std::pair<std::string, int64_t>> kept;
  for (const auto& [token, count] : counts) {
    if (count >= min_freq) kept.emplace_back(token, count);
  }
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  // torchtext keeps max_tokens - len(specials) tokens; the one special is the unknown id 0.
  const auto room = static_cast<size_t>(std::max<int64_t>(max_tokens - 1, 0));
  if (kept.size() > room) kept.resize(room);
  for (auto& [token, count] : kept) {
    ids_.emplace(token, static_cast<int64_t>(tokens_.size()) + 1);
    tokens_.push_back(std::move(token));
  }
}

int64_t Vocabulary::id(const std::string& token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? 0 : it->second;
}

}  // namespace ddpbench::data
