// synthetic_tensors.cpp — see synthetic_tensors.h.
#include "data/synthetic_tensors.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data/keyed_rng.h"

namespace ddpbench::data {

std::string describe_shape(const SyntheticTensorsShape& shape) {
  const std::string inputs =
      shape.input_dtype == "int64"
          ? fmt::format("inputs [{}] int64 < {}", fmt::join(shape.input_shape, ","),
                        shape.vocab_size)
          : fmt::format("inputs [{}] float32", fmt::join(shape.input_shape, ","));
  const std::string targets =
      shape.num_classes > 0 ? fmt::format("{} classes", shape.num_classes)
                            : fmt::format("targets [{}] float32", fmt::join(shape.target_shape, ","));
  return inputs + " -> " + targets;
}

namespace {

// Standard normal float32 values of `shape`, drawn in order from `rng`.
at::Tensor normal_tensor(const std::vector<int64_t>& shape, KeyedRng& rng) {
  at::Tensor t = at::empty(shape, at::kFloat);
  float* p = t.data_ptr<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(rng.normal());
  return t;
}

}  // namespace

SyntheticTensors::SyntheticTensors(SyntheticTensorsShape shape, int64_t size, int64_t seed,
                                   int64_t first_key)
    : shape_(std::move(shape)), size_(size), seed_(seed), first_key_(first_key) {}

Example SyntheticTensors::get(int64_t index, int64_t /*epoch*/) const {
  // One generator per sample: the input's values, then the target's, from the same key.
  KeyedRng rng(static_cast<uint64_t>(seed_), RngStream::kSyntheticTensors,
               {static_cast<uint64_t>(first_key_ + index)});
  Example e;
  if (shape_.input_dtype == "int64") {
    e.input = at::empty(shape_.input_shape, at::kLong);
    int64_t* p = e.input.data_ptr<int64_t>();
    for (int64_t i = 0; i < e.input.numel(); ++i) {
      p[i] = static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(shape_.vocab_size)));
    }
  } else {
    e.input = normal_tensor(shape_.input_shape, rng);
  }
  if (shape_.num_classes > 0) {
    e.target = at::scalar_tensor(
        static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(shape_.num_classes))),
        at::kLong);
  } else {
    e.target = normal_tensor(shape_.target_shape, rng);
  }
  return e;
}

std::string SyntheticTensors::describe() const {
  // A held-out split is as large as any --eval-size (generated on demand): its size says nothing.
  if (first_key_ > 0) {
    return fmt::format("held-out synthetic {} (seed {}, keys from {})", describe_shape(shape_),
                       seed_, first_key_);
  }
  return fmt::format("synthetic {} ({} samples, seed {})", describe_shape(shape_), size_, seed_);
}

}  // namespace ddpbench::data
