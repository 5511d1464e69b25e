// scenarios_gpt_net_test.cpp — gpt_tiny's pieces: the transformer's logits are [B, vocab, T] and
// causal (a later token never moves an earlier position's logits); the output projection is the
// token embedding itself (no lm_head parameter, and wte's gradient reaches rows of tokens the
// input never held, which only the output projection can give it); a Dropout with p > 0 makes
// the model one whose forward draws (seeded per rank chunk in every mode), p = 0 does not; the
// synthetic token data's target is its input shifted by one, the same bytes for the same key.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "data/synthetic_tokens.h"
#include "modes/common/forward_draws.h"
#include "scenarios/models/gpt_net.h"

namespace ddpbench::scenarios::models {
namespace {

GptConfig quiet_config() {
  GptConfig c;
  c.dropout = 0.0;
  return c;
}

TEST(GptNet, LogitsAreBatchVocabularyTimeAndCausal) {
  torch::manual_seed(0);
  Gpt model(quiet_config());
  at::Tensor tokens = at::randint(0, 64, {2, 16}, at::kLong);
  const at::Tensor logits = model->forward(tokens);
  EXPECT_EQ(logits.sizes(), (at::IntArrayRef{2, 64, 16}));
  at::Tensor changed = tokens.clone();
  changed[0][10] = (tokens[0][10].item<int64_t>() + 1) % 64;
  const at::Tensor again = model->forward(changed);
  EXPECT_TRUE(at::equal(logits.slice(2, 0, 10), again.slice(2, 0, 10)));
  EXPECT_FALSE(at::equal(logits.slice(2, 10, 11), again.slice(2, 10, 11)));
}

TEST(GptNet, TheOutputProjectionIsTheTokenEmbedding) {
  torch::manual_seed(0);
  Gpt model(quiet_config());
  int64_t count = 0;
  for (const auto& p : model->named_parameters()) {
    EXPECT_EQ(p.key().find("lm_head"), std::string::npos) << p.key();
    ++count;
  }
  EXPECT_EQ(count, 28);  // wte, wpe, 2 x 12 per block, ln_f's two
  const at::Tensor tokens = at::full({1, 4}, 3, at::kLong);  // only row 3 is looked up
  at::Tensor loss =
      torch::nn::functional::cross_entropy(model->forward(tokens), at::full({1, 4}, 5, at::kLong));
  loss.backward();
  const at::Tensor grad = model->named_parameters()["wte.weight"].grad();
  EXPECT_GT(grad[5].abs().sum().item<double>(), 0.0);  // the target's row: the output side only
}

TEST(GptNet, ADropoutAboveZeroMakesTheModelDraw) {
  GptConfig drawing;
  drawing.dropout = 0.1;
  EXPECT_TRUE(modes::ForwardDraws(*Gpt(drawing)).seeds());
  EXPECT_FALSE(modes::ForwardDraws(*Gpt(quiet_config())).seeds());
}

TEST(SyntheticTokens, TheTargetIsTheInputShiftedByOne) {
  const data::SyntheticTokens set({}, 7);
  const data::Example a = set.get(11, 0);
  EXPECT_EQ(a.input.sizes(), (at::IntArrayRef{16}));
  EXPECT_TRUE(at::equal(a.input.slice(0, 1), a.target.slice(0, 0, 15)));
  EXPECT_TRUE(at::equal(set.get(11, 3).input, a.input));  // keyed: no epoch, no state
  EXPECT_FALSE(at::equal(set.get(12, 0).input, a.input));
  EXPECT_LT(a.input.max().item<int64_t>(), 64);
}

}  // namespace
}  // namespace ddpbench::scenarios::models
