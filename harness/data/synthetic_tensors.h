// synthetic_tensors.h — random inputs and targets of a declared shape, for a model that comes
// without data (`ddpbench run --model net.pt --input-shape 3,32,32 --num-classes 10`). Sample i
// is drawn from a generator keyed by (seed, i) (data/keyed_rng.h, Note [Keyed randomness]), so it
// is the same bytes in every mode, rank and replica, on any machine, and a held-out split is a
// disjoint key range. The data carries no signal: it exists to drive the model's forward and
// backward the same way in every mode, which is what the checks compare.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace ddpbench::data {

// What a synthetic sample looks like. Inputs are standard normal floats, or int64 token ids
// uniform in [0, vocab_size). Targets are int64 class labels uniform in [0, num_classes) when
// num_classes > 0, else standard normal floats of target_shape.
struct SyntheticTensorsShape {
  std::vector<int64_t> input_shape;     // per sample; empty: no synthetic data
  std::string input_dtype = "float32";  // or "int64" (token ids); floats follow the run's dtype
  int64_t vocab_size = 0;               // int64 inputs: ids are below it
  int64_t num_classes = 0;              // > 0: class labels
  std::vector<int64_t> target_shape;    // regression targets per sample ({} with num_classes)
  int64_t samples = 1024;               // the training split's size

  bool requested() const { return !input_shape.empty(); }
};

// "inputs [3,32,32] float32 -> 10 classes"; "inputs [16] int64 < 100 -> targets [4] float32".
std::string describe_shape(const SyntheticTensorsShape& shape);

class SyntheticTensors : public Dataset {
 public:
  // Samples first_key, first_key + 1, ... of the keyed stream: the held-out split starts at the
  // training split's size, so it shares no sample with it.
  SyntheticTensors(SyntheticTensorsShape shape, int64_t size, int64_t seed, int64_t first_key = 0);
  int64_t size() const override { return size_; }
  Example get(int64_t index, int64_t epoch) const override;
  bool same_every_epoch() const override { return true; }  // no augmentation
  std::string describe() const override;

 private:
  SyntheticTensorsShape shape_;
  int64_t size_;
  int64_t seed_;
  int64_t first_key_;
};

}  // namespace ddpbench::data
