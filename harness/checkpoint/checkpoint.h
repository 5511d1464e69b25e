// checkpoint.h — a training checkpoint as a file Python's `torch.load` reads, laid out as a
// PyTorch training script saves one: {"model": state_dict, "optimizer": optimizer.state_dict(),
// "epoch": e, "step": s, "ddpbench": {what identifies the trajectory}}. The model's keys are the
// state_dict names (parameters, then buffers, num_batches_tracked included), bare by default or
// with a prefix ("module.", as a DistributedDataParallel-wrapped model names them), so
// `torchvision.models.resnet18(num_classes=10).load_state_dict(ckpt["model"], strict=True)` takes
// a cifar_resnet18 checkpoint as it is. Reading accepts either form (issue 24).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "modes/common/training_state.h"
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {
class GradScaler;
}

namespace ddpbench::checkpoint {

// The prefix DistributedDataParallel puts before every state_dict key.
inline constexpr const char* kDdpKeyPrefix = "module.";

// What a checkpoint says about the run that wrote it: a resume into a different run is refused.
struct CheckpointMeta {
  std::string scenario;
  std::string mode;  // the mode whose trajectory it is
  int64_t seed = 0;
  int64_t world_size = 1;
  int64_t global_batch = 0;
  std::string dtype;  // "float32" or "float64"
  // Optimizer steps done, which is also the run-global index of the next step, and the sampler
  // epoch that step belongs to.
  int64_t step = 0;
  int64_t epoch = 0;
  // The scenario's model_name: a built-in's, or "TorchScript sha256:<hex>" for --model FILE, so a
  // resume with another file is refused. "" in files written before ddpbench saved it.
  std::string model;
  // --amp: "off", "bf16" or "fp16" ("off" in files written before ddpbench saved it). An fp16
  // checkpoint also holds the GradScaler's state (PyTorch's "scaler" entry).
  std::string amp = "off";
  // DDP: the gradient buckets the next step reduces with, parameter indices (among the parameters
  // DDP reduces) per bucket in launch order, and the bucket cap they were made under. At 3 ranks
  // or more a bucket's layout decides the order of each element's sum, so a resumed run starts
  // from these rather than from first-iteration buckets (issue 51); saved as text, "9,8,7;6,5".
  // Empty: another mode, the naive strategy, or a file written before ddpbench saved them.
  std::vector<std::vector<int64_t>> ddp_buckets;
  int64_t ddp_bucket_cap_bytes = 0;
};

struct Checkpoint {
  CheckpointMeta meta;
  modes::TrainingState state;  // in the module's registration order (training_state.h)
};

// The file's bytes for `module`'s state and the scenarios' SGD `optimizer`'s, keys with `prefix`;
// with a `scaler` (--amp fp16) also its state_dict as PyTorch's AMP recipe saves it ("scaler":
// scale, growth_factor, backoff_factor, growth_interval, _growth_tracker).
std::vector<char> checkpoint_bytes(const torch::nn::Module& module,
                                   torch::optim::Optimizer& optimizer,
                                   const scenarios::OptimizerSpec& spec, const CheckpointMeta& meta,
                                   const std::string& prefix,
                                   const scenarios::GradScaler* scaler = nullptr);

// Reads a checkpoint (`path` only names it in messages) for a model with `module`'s parameter and
// buffer names, shapes and dtypes, keys bare or with "module.", trained by `optimizer`'s
// optimizer. `check_meta` sees what the file says about its run before its tensors are matched (a
// checkpoint of another scenario is refused as that, not as its first unknown key). Throws
// InputError naming what is wrong and the fix: not a torch.load file, a record larger than the
// model's tensors or shorter than its tensor, not a checkpoint, a missing or unexpected key, a
// shape or dtype that does not fit, NaN or infinity in a tensor, optimizer state that `optimizer`
// would not have kept.
Checkpoint parse_checkpoint(const std::vector<char>& bytes, const std::string& path,
                            const torch::nn::Module& module,
                            const scenarios::OptimizerSpec& optimizer,
                            const std::function<void(const CheckpointMeta&)>& check_meta = {});

}  // namespace ddpbench::checkpoint
