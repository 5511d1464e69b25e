// data_text_test.cpp — the text data path: torchtext's basic_english tokenizer (expected tokens
// produced by torchtext's own rules in Python), the vocabulary's order, cap and minimum frequency,
// the aclImdb reader on a tiny tree written here (and its errors for a missing or empty folder),
// the synthetic text generator (keyed, lengths known without loading), and padding: every shard of
// a step is padded to the longest sequence of the global batch, so a rank's slice equals the
// matching rows of the global batch.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "data/basic_english.h"
#include "data/batch_plan.h"
#include "data/imdb_reviews.h"
#include "data/synthetic_text.h"
#include "data/token_sequences.h"
#include "data/vocabulary.h"
#include "errors.h"
#include "support/temp_dir_test.h"

namespace ddpbench::data {
namespace {
namespace fs = std::filesystem;
using Tokens = std::vector<std::string>;

TEST(BasicEnglish, MatchesTorchtextRules) {
  // Expected values from torchtext's _basic_english_normalize (Python re, same patterns).
  EXPECT_EQ(basic_english_tokenize("I didn't like it.<br /><br />The END!"),
            (Tokens{"i", "didn", "'", "t", "like", "it", ".", "the", "end", "!"}));
  EXPECT_EQ(basic_english_tokenize("He said \"Wow\", (really?) yes; no: maybe..."),
            (Tokens{"he", "said", "wow", ",", "(", "really", "?", ")", "yes", "no", "maybe", ".",
                    ".", "."}));
  // Latin-1 capitals lowercase; NBSP, tab and \x1c split, as Python's str.split does.
  EXPECT_EQ(basic_english_tokenize("CAF\xc3\x89 D\xc3\xa9j\xc3\xa0\xc2\xa0vu\ttab\x1csep"),
            (Tokens{"caf\xc3\xa9", "d\xc3\xa9j\xc3\xa0", "vu", "tab", "sep"}));
  // Only the exact "<br />" is a break (after lowercasing).
  EXPECT_EQ(basic_english_tokenize("<BR />Hello<br/>World"), (Tokens{"hello<br/>world"}));
  EXPECT_TRUE(basic_english_tokenize("  \n ").empty());
}

TEST(Vocabulary, MostFrequentFirstTiesInByteOrderCappedWithUnknownZero) {
  const Vocabulary::Counts counts = {{"the", 50}, {"a", 30}, {"b", 30}, {"rare", 19}, {"c", 20}};
  const Vocabulary v(counts, /*min_freq=*/20, /*max_tokens=*/4);
  ASSERT_EQ(v.size(), 4);  // id 0 + three tokens: "c" (20) is past the cap, "rare" below min_freq
  EXPECT_EQ(v.id("the"), 1);
  EXPECT_EQ(v.id("a"), 2);
  EXPECT_EQ(v.id("b"), 3);
  EXPECT_EQ(v.id("c"), 0);
  EXPECT_EQ(v.id("rare"), 0);
  EXPECT_EQ(v.id("never seen"), 0);
  EXPECT_EQ(v.token(2), "a");
  const Vocabulary uncapped(counts, 20, 100);
  EXPECT_EQ(uncapped.size(), 5);
  EXPECT_EQ(uncapped.id("c"), 4);
}

class ImdbReader : public testing::TempDirTest {
 protected:
  void write_review(const std::string& cls, const std::string& name, const std::string& text) {
    const fs::path dir = fs::path(path("aclImdb")) / "train" / cls;
    fs::create_directories(dir);
    std::ofstream(dir / name) << text;
  }
};

TEST_F(ImdbReader, ReadsNegThenPosInNameOrderWithTheVocabulary) {
  write_review("pos", "1_9.txt", "Great great film.");
  write_review("pos", "0_10.txt", "Great!");
  write_review("neg", "0_2.txt", "Bad film, bad.");
  write_review("neg", "README", "not a review");
  ImdbOptions options;
  options.min_freq = 2;
  const auto ds = load_imdb_reviews(path("aclImdb"), options);
  ASSERT_EQ(ds->size(), 3);
  // Counts: great 3, "." 2, film 2, bad 2, "," 1, "!" 1 -> great=1, "."=2, bad=3, film=4.
  auto ids = [&](int64_t i) {
    const at::Tensor t = ds->get(i, 0).input;
    return std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
  };
  EXPECT_EQ(ids(0), (std::vector<int64_t>{3, 4, 0, 3, 2}));  // neg/0_2: bad film , bad .
  EXPECT_EQ(ds->get(0, 0).target.item<int64_t>(), 0);
  EXPECT_EQ(ids(1), (std::vector<int64_t>{1, 0}));        // pos/0_10: great !
  EXPECT_EQ(ids(2), (std::vector<int64_t>{1, 1, 4, 2}));  // pos/1_9: great great film .
  EXPECT_EQ(ds->get(2, 0).target.item<int64_t>(), 1);
  EXPECT_EQ(ds->sequence_length(0), 5);
  EXPECT_EQ(ds->get(0, 0).input.scalar_type(), at::kLong);
}

TEST_F(ImdbReader, MissingOrEmptyFoldersAreInputErrorsNamingThePath) {
  try {
    load_imdb_reviews(path("nowhere"));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path("nowhere") + "/train/neg"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("aclImdb"), std::string::npos) << e.what();
  }
  write_review("neg", "0_1.txt", "bad");
  fs::create_directories(fs::path(path("aclImdb")) / "train" / "pos");
  try {
    load_imdb_reviews(path("aclImdb"));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("train/pos: holds no review"), std::string::npos)
        << e.what();
  }
}

TEST(SyntheticText, KeyedLengthsKnownUpFrontAndAClassSignal) {
  SyntheticTextOptions o;
  o.size = 400;
  const SyntheticText a(o, 7);
  const SyntheticText b(o, 7);
  const SyntheticText other(o, 8);
  int64_t shortest = o.max_length;
  int64_t longest = o.min_length;
  bool seeds_differ = false;
  // Tokens of each class, to see the signal: some ids are far more frequent in one class.
  std::vector<std::vector<int64_t>> counts(2, std::vector<int64_t>(o.vocab_size, 0));
  for (int64_t i = 0; i < o.size; ++i) {
    const Example e = a.get(i, 0);
    ASSERT_EQ(e.input.scalar_type(), at::kLong);
    EXPECT_EQ(e.input.size(0), a.sequence_length(i).value());
    EXPECT_TRUE(at::equal(e.input, b.get(i, 3).input)) << "keyed by (seed, index) only";
    seeds_differ = seeds_differ ||
                   !at::equal(e.input.narrow(0, 0, 10), other.get(i, 0).input.narrow(0, 0, 10));
    shortest = std::min(shortest, e.input.size(0));
    longest = std::max(longest, e.input.size(0));
    EXPECT_GE(e.input.min().item<int64_t>(), 1);
    EXPECT_LT(e.input.max().item<int64_t>(), o.vocab_size);
    const int64_t label = e.target.item<int64_t>();
    const int64_t* ids = e.input.data_ptr<int64_t>();
    for (int64_t t = 0; t < e.input.size(0); ++t) ++counts[label][ids[t]];
  }
  EXPECT_TRUE(seeds_differ);
  EXPECT_LT(shortest, 100);
  EXPECT_GT(longest, 450);
  int64_t class_tokens = 0;
  for (int64_t id = 0; id < o.vocab_size; ++id) {
    if (counts[0][id] > 10 * (counts[1][id] + 1) || counts[1][id] > 10 * (counts[0][id] + 1)) {
      ++class_tokens;
    }
  }
  EXPECT_GE(class_tokens, 2 * o.signal_tokens - 5);  // a collision or two between classes at most
}

TEST(SequencePadding, EveryShardIsPaddedToTheGlobalBatchsLongest) {
  TokenSequences ds;
  ds.add({1, 2, 3}, 0);
  ds.add({4}, 1);
  ds.add({5, 6, 7, 8, 9, 10}, 0);
  ds.add({11, 12}, 1);
  // Rank 0's slice {0, 1} alone would pad to 3, rank 1's {2, 3} to 6.
  const std::vector<int64_t> global = {0, 1, 2, 3};
  EXPECT_EQ(padded_length(ds, global), 6);
  const int64_t pad = padded_length(ds, global);
  const Batch all = collate(ds, global, 0, pad);
  const Batch rank0 = collate(ds, {0, 1}, 0, pad);
  const Batch rank1 = collate(ds, {2, 3}, 0, pad);
  ASSERT_EQ(all.inputs.sizes(), (at::IntArrayRef{4, 6}));
  EXPECT_TRUE(at::equal(at::cat({rank0.inputs, rank1.inputs}), all.inputs));
  EXPECT_TRUE(at::equal(all.inputs[1], at::tensor({4, 0, 0, 0, 0, 0}, at::kLong)));
  EXPECT_TRUE(at::equal(all.targets, at::tensor({0, 1, 0, 1}, at::kLong)));
  // Without a length, a batch pads to its own longest (pad_sequence); a too-short one is a bug.
  EXPECT_EQ(collate(ds, {0, 1}, 0).inputs.size(1), 3);
  EXPECT_THROW(collate(ds, global, 0, 3), std::logic_error);
}

TEST(SequencePadding, DatasetsOfOneShapeAreStackedAsBefore) {
  const auto plan = GlobalBatchPlan({4, 2, false, 0, false}, 4);
  struct Fixed : Dataset {
    int64_t size() const override { return 4; }
    Example get(int64_t i, int64_t) const override {
      return {at::full({3}, static_cast<double>(i)), at::scalar_tensor(i, at::kLong)};
    }
    std::string describe() const override { return "fixed"; }
  } ds;
  EXPECT_EQ(padded_length(ds, plan.epoch(0).global_batch(0)), 0);
  EXPECT_EQ(collate(ds, {0, 1}, 0, 0).inputs.sizes(), (at::IntArrayRef{2, 3}));
}

}  // namespace
}  // namespace ddpbench::data
