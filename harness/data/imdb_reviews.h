// imdb_reviews.h — the training split of the Large Movie Review Dataset (aclImdb, Maas et al.
// 2011) as extracted from aclImdb_v1.tar.gz: <dir>/train/neg/*.txt (label 0) and
// <dir>/train/pos/*.txt (label 1), one review per file, read in file-name order (the same order
// on every host and rank). Each review is tokenised with basic_english (basic_english.h) and
// encoded with a vocabulary built from the whole split (vocabulary.h); unknown tokens are id 0.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "data/dataset.h"

namespace ddpbench::data {

struct ImdbOptions {
  int64_t min_freq = 20;       // build_vocab_from_iterator(min_freq=...)
  int64_t max_tokens = 15000;  // ids in all, the unknown id 0 included
};

// Throws InputError naming the folder when train/neg or train/pos is missing, unreadable or holds
// no .txt file.
std::shared_ptr<const Dataset> load_imdb_reviews(const std::string& dir,
                                                 const ImdbOptions& options = {});

}  // namespace ddpbench::data
