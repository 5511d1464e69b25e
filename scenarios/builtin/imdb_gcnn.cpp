// imdb_gcnn.cpp — scenario `imdb_gcnn`: a gated convolutional text classifier (models/
// gated_cnn_net.h) on IMDB-style reviews: binary_cross_entropy(sigmoid(logits), one_hot(label)),
// Adam lr 1e-3, clip_grad_norm_(0.1) after the gradient reduction, batch 128. The data is
// synthetic text with a learnable signal (data/synthetic_text.h), or the real aclImdb training
// split with --data-dir (data/imdb_reviews.h: basic_english tokens, a vocabulary of the tokens
// seen >= 20 times capped at 15000 ids, id 0 unknown and padding).
//
// Sequences vary in length and are padded with id 0 to the longest of each step's *global*
// batch in every mode (data/dataset.h, padded_length): PyTorch's recipe pads each DataLoader
// batch, so a DDP rank would pad its slice to its own longest and see different tensors than
// single-device training; padding to the global batch's length makes the modes comparable, and
// every mode must then agree with single-device training.
#include <torch/utils.h>

#include "data/imdb_reviews.h"
#include "data/synthetic_text.h"
#include "scenarios/models/gated_cnn_net.h"
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

ScenarioSpec imdb_gcnn_scenario() {
  ScenarioSpec s;
  s.name = "imdb_gcnn";
  s.summary = "gated CNN text classifier, BCE on one-hot, Adam lr 1e-3, clip_grad_norm 0.1";
  s.model_name = "gated CNN (2 GLU conv blocks)";
  s.dataset_name = "IMDB reviews (synthetic text unless --data-dir)";
  s.reads_data_dir = true;
  s.global_batch = 128;
  s.steps = 20;
  s.seed = 0;
  s.loss = LossKind::kBceOneHot;
  s.optimizer.kind = OptimizerKind::kAdam;
  s.optimizer.lr = 1e-3;
  s.clip_grad_norm = 0.1;
  s.torch_oracle_model = "gated_cnn";
  // Measured on the CPU, batch 128, 20 lockstep steps: embedding.weight's gradient differs from
  // single-device training's by up to 3.5e-5 (2 ranks) and 1.3e-5 (4 ranks) of its largest entry,
  // every other tensor by less than 2e-5. The cause is row 0, the id of unknown tokens and of the
  // padding: it sums the gradient of every padded position (about 26,000 terms of both signs in a
  // batch of 128 padded to ~500 tokens) and the sum runs in another order once the batch is split
  // (checked in PyTorch 1.13: split in two, row 0 differs by 2.5e-6 of the largest entry, every
  // other row by < 1e-9). 1e-4 keeps about 3x headroom and still catches a 1e-3 error on the
  // gradient of one rank out of up to 8 (1.25e-4; tests/e2e/text_e2e_test.cpp).
  s.tolerances.gradient_float32 = 1e-4;
  s.build_model = [](int64_t seed) {
    torch::manual_seed(static_cast<uint64_t>(seed));
    return torch::nn::AnyModule(models::GatedCnn());
  };
  s.build_dataset = [](const BuildRequest& request) -> std::shared_ptr<const data::Dataset> {
    if (!request.data_dir.empty()) {
      data::ImdbOptions options;
      options.max_tokens = models::GatedCnnImpl::kVocabulary;  // every id fits the embedding
      return data::load_imdb_reviews(request.data_dir, options);
    }
    data::SyntheticTextOptions options;
    options.vocab_size = models::GatedCnnImpl::kVocabulary;
    return std::make_shared<data::SyntheticText>(options, request.seed);
  };
  // The evaluation pass: synthetic text keyed past the 25000 training samples (same classes and
  // signal, no shared sample). aclImdb's test split is not read yet: with --data-dir the pass is
  // skipped with that reason.
  s.build_eval_dataset = [](const BuildRequest& request) {
    EvalSet out;
    if (!request.data_dir.empty()) {
      out.unavailable = "the aclImdb test split (test/pos, test/neg) is not read yet";
      return out;
    }
    data::SyntheticTextOptions options;
    options.vocab_size = models::GatedCnnImpl::kVocabulary;
    options.size = 5000;
    options.first_key = data::SyntheticTextOptions{}.size;
    out.dataset = std::make_shared<data::SyntheticText>(options, request.seed);
    return out;
  };
  s.eval_size = 256;
  return s;
}

}  // namespace ddpbench::scenarios
