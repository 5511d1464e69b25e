// imdb_reviews.cpp — see imdb_reviews.h. The vocabulary needs the counts of the whole split before
// any review can be encoded: each review is first kept as ids into a table of every distinct token
// (a few hundred MB less than keeping its strings), then those ids are mapped to vocabulary ids.
#include "data/imdb_reviews.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "data/basic_english.h"
#include "data/token_sequences.h"
#include "data/vocabulary.h"
#include "errors.h"

namespace ddpbench::data {
namespace {
namespace fs = std::filesystem;

constexpr const char* kFix =
    "--data-dir must be the aclImdb folder extracted from aclImdb_v1.tar.gz (holding train/neg "
    "and train/pos)";

// The .txt files of one class folder, sorted by name.
std::vector<fs::path> review_files(const fs::path& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    throw InputError(fmt::format("{}: no such folder; {}", folder.string(), kFix));
  }
  std::vector<fs::path> files;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".txt" && it->is_regular_file(ec)) files.push_back(it->path());
  }
  if (ec)
    throw InputError(
        fmt::format("{}: cannot list it ({}); {}", folder.string(), ec.message(), kFix));
  if (files.empty()) {
    throw InputError(fmt::format("{}: holds no review (.txt) file; {}", folder.string(), kFix));
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw InputError(fmt::format("{}: cannot read it", file.string()));
  return text.str();
}

struct Review {
  std::vector<int32_t> seen;  // ids into the table of distinct tokens
  int64_t label;
};

}  // namespace

std::shared_ptr<const Dataset> load_imdb_reviews(const std::string& dir,
                                                 const ImdbOptions& options) {
  const fs::path train = fs::path(dir) / "train";
  std::vector<Review> reviews;
  std::unordered_map<std::string, int32_t> distinct;
  std::vector<std::string> distinct_tokens;
  std::vector<int64_t> distinct_counts;
  const char* classes[] = {"neg", "pos"};  // labels 0 and 1
  for (int64_t label = 0; label < 2; ++label) {
    for (const fs::path& file : review_files(train / classes[label])) {
      Review r{{}, label};
      for (std::string& t : basic_english_tokenize(read_text(file))) {
        auto [it, fresh] = distinct.try_emplace(t, static_cast<int32_t>(distinct_tokens.size()));
        if (fresh) {
          distinct_tokens.push_back(std::move(t));
          distinct_counts.push_back(0);
        }
        ++distinct_counts[static_cast<size_t>(it->second)];
        r.seen.push_back(it->second);
      }
      reviews.push_back(std::move(r));
    }
  }
  Vocabulary::Counts counts;
  for (size_t i = 0; i < distinct_tokens.size(); ++i)
    counts[distinct_tokens[i]] = distinct_counts[i];
  const Vocabulary vocabulary(counts, options.min_freq, options.max_tokens);
  std::vector<int64_t> vocabulary_id(distinct_tokens.size());
  for (size_t i = 0; i < distinct_tokens.size(); ++i)
    vocabulary_id[i] = vocabulary.id(distinct_tokens[i]);
  auto dataset = std::make_shared<TokenSequences>();
  std::vector<int64_t> ids;
  for (const Review& r : reviews) {
    ids.clear();
    for (int32_t t : r.seen) ids.push_back(vocabulary_id[static_cast<size_t>(t)]);
    dataset->add(ids, r.label);
  }
  dataset->set_description(fmt::format(
      "aclImdb train ({} reviews from {}, basic_english, vocabulary {} ids: min_freq {})",
      reviews.size(), dir, vocabulary.size(), options.min_freq));
  return dataset;
}

}  // namespace ddpbench::data
