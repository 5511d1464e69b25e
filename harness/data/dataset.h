// dataset.h — the dataset interface every mode reads through. A dataset maps (index, epoch) to
// one example deterministically and thread-safely: epoch-dependent randomness (augmentation) is
// keyed, so any mode, rank or thread asking for the same (index, epoch) gets identical tensors.
// Samples have one shape (images, features), or are token sequences of varying length (text),
// which collate pads.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ddpbench::data {

struct Example {
  at::Tensor input;   // float32, e.g. [C, H, W] or [features]; int64 token ids [length] for text
  at::Tensor target;  // int64 scalar class label, or a float32 tensor for regression
};

struct Batch {
  at::Tensor inputs;   // [B, ...]
  at::Tensor targets;  // [B] or [B, ...]
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual Example get(int64_t index, int64_t epoch) const = 0;
  // One line for run headers and reports, e.g. "synthetic CIFAR-10 (50000 samples, seed 0)".
  virtual std::string describe() const = 0;
  // Sequence datasets: the length of sample `index` (its input is an int64 [length] tensor),
  // known without loading it, so a process that loads only its own slice of a step (a DDP rank)
  // still knows the longest sequence of the whole global batch. std::nullopt for datasets whose
  // samples all have one shape, which stack as they are.
  virtual std::optional<int64_t> sequence_length(int64_t /*index*/) const { return std::nullopt; }
  // Whether get(index, epoch) is the same for every epoch (no epoch-keyed augmentation): such a
  // dataset can be materialised once, as it is, on a device (data/device_data.h).
  virtual bool same_every_epoch() const { return false; }
};

// The length every sequence of a step is padded to: the longest among `global_batch` (0 for a
// dataset of one shape). PyTorch pads a batch to its own longest sequence; padding each shard
// to its own would give single (the global batch), dp (one shard per replica) and ddp (one rank's
// slice) different tensors for the same sample, and convolutions over the padding would make the
// modes' gradients differ. Padding every shard to the global batch's longest keeps them equal.
int64_t padded_length(const Dataset& dataset, const std::vector<int64_t>& global_batch);

// The length a batch whose longest sequence has `longest` tokens is padded to: `pad_to`, or that
// longest when pad_to is 0 (pad_sequence's rule). Throws std::logic_error when a sequence does not
// fit a positive pad_to (the step loop pads to the global batch's longest, which bounds every
// shard's). collate and the device form (device_samples.h) both pad by it.
int64_t batch_padded_length(int64_t longest, int64_t pad_to);

// Loads `indices` in the given order and stacks them into one batch. Sequences are right-padded
// with token 0 to `pad_to`, or to their own longest when pad_to is 0 (pad_sequence's rule).
Batch collate(const Dataset& dataset, const std::vector<int64_t>& indices, int64_t epoch,
              int64_t pad_to = 0);

}  // namespace ddpbench::data
