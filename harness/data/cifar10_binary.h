// cifar10_binary.h — loader for the CIFAR-10 "binary version" (cifar-10-batches-bin): records of
// 1 label byte + 3072 pixel bytes (R, G, B planes of 32x32), in data_batch_1..5.bin /
// test_batch.bin.
#pragma once

#include <string>

#include "data/image_source.h"

namespace ddpbench::data {

enum class Cifar10Split { kTrain, kTest };

inline constexpr int64_t kCifar10RecordBytes = 1 + 3 * 32 * 32;

// Loads every present data_batch_N.bin (train) or test_batch.bin (test) from `dir`.
// Throws InputError naming the file for a missing directory/file, a size that is not a whole
// number of records, or a label outside [0, 9].
InMemoryImages load_cifar10_binary(const std::string& dir, Cifar10Split split);

}  // namespace ddpbench::data
