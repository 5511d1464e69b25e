// checkpoint_file.h — torch.load's reading of a --resume file, bounded by the model it is for.
// torch::pickle_load trusts the file: it inflates every record to the size the zip directory
// claims (a 1 MB file can claim 1 GiB) and builds each tensor's storage with the byte count
// data.pkl states, whatever its record holds, so a truncated record reads past its buffer or
// through a null pointer. Here every record is bounded before it is read, and the bytes each
// tensor's record holds are kept, for the caller to check against the tensor it expects.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace ddpbench::checkpoint {

// The most a checkpoint of one model can hold, in bytes.
struct RecordBounds {
  uint64_t largest_tensor = 0;  // one tensor record: the model's largest tensor
  uint64_t all_tensors = 0;     // every tensor record read, together
  uint64_t pickle = 0;          // data.pkl
};

struct TorchFile {
  c10::IValue value;
  // The bytes of the record behind `t`'s storage; 0 for a storage no record backs.
  uint64_t record_bytes(const at::Tensor& t) const;

  std::unordered_map<const void*, uint64_t> records;  // by storage data pointer
};

// Which flag a file came with and how its user makes a good one, for the refusals.
struct TorchFileRole {
  std::string flag = "--resume";
  std::string fix =
      "pass a checkpoint of this run's scenario written by `ddpbench run "
      "--checkpoint-every N`";
  // What bounds a tensor record, and all of them.
  std::string one_tensor = "any tensor of this scenario's model";
  std::string all_tensors = "this scenario's model and optimizer state";
};

// The value torch.load gives for `bytes`, every tensor on the host. Throws InputError ("--resume
// `path`: ...", or role.flag) for a file torch.load cannot read and for a record past `bounds`.
// Without `with_tensors` no tensor record is read or bounded and every tensor's storage is empty,
// never to be read: what the file says about its run, to check before its tensors (another
// scenario's checkpoint is refused as that, not as a record too large for this model).
TorchFile read_torch_file(const std::vector<char>& bytes, const std::string& path,
                          const RecordBounds& bounds, bool with_tensors,
                          const TorchFileRole& role = {});

}  // namespace ddpbench::checkpoint
