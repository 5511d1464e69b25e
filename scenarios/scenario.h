// scenario.h — the scenario descriptor: everything that defines one training workload (model,
// data, loss, optimizer, batch, tolerances, legitimate divergences). One file per scenario fills
// one of these in (scenarios/builtin/<name>.cpp); the build registers every file there. Modes
// share this definition, the batch plan and the optimizer factory — never a gradient path
// (Note [Independent gradient paths] in docs/ARCHITECTURE.md).
#pragma once

#include <torch/nn/modules/container/any.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/synthetic_tensors.h"
#include "scenarios/choice_names.h"
#include "scenarios/optim/grad_scaler.h"
#include "scenarios/optim/lr_schedule.h"

namespace ddpbench::scenarios {

// torch.optim.SGD's, Adam's or AdamW's hyper-parameters (libtorch's SGD, Adam and AdamW implement
// the same update rules as Python's single-tensor steps).
struct OptimizerSpec {
  // SGD's fields first, in torch.optim.SGD's argument order: scenarios brace-initialise them.
  double lr = 0.01;
  double momentum = 0.0;      // SGD only
  double dampening = 0.0;     // SGD only
  double weight_decay = 0.0;  // SGD, Adam: L2 added to the gradient; AdamW: decoupled
  bool nesterov = false;      // SGD only
  OptimizerKind kind = OptimizerKind::kSgd;
  // Adam and AdamW only (amsgrad is not offered).
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  // Parameter groups (scenarios/optim/parameter_groups.h): a parameter any rule matches steps in
  // a second group with weight decay 0, as nanoGPT's configure_optimizers builds it. A rule is
  // "1d" (a tensor of fewer than 2 dimensions: biases, norms' gains) or a substring of the
  // parameter's name. Empty: one group.
  std::vector<std::string> no_decay;
  // The no-decay group's learning rate as a multiple of the schedule's (optim/lr_schedule.h
  // group_lr), as a param_groups entry's own lr: 1 steps both groups at one rate.
  double no_decay_lr_scale = 1.0;
  // The learning rate per optimizer step; `lr` is its base.
  ScheduleSpec schedule;
};

// Pass rule |a - b| <= atol + rtol * |ref| (Note [Tolerance model] in docs/ARCHITECTURE.md).
struct Tolerance {
  double rtol = 0.0;
  double atol = 0.0;
  std::string reason;  // why these numbers (defaults, or a written reason for widening)
};

struct Tolerances {
  // Parameters, buffers and losses: torch.testing.assert_close's float32 defaults.
  Tolerance float32{1.3e-6, 1e-5, "torch.testing.assert_close float32 defaults"};
  // float64 is tighter than assert_close (1e-7): a correct data-parallel run differs from
  // single-device only by summation order, ~1e-15 relative, and float64 exists to expose
  // algorithmic differences that float32 rounding would hide.
  Tolerance float64{1e-10, 1e-12, "float64: only summation order may differ"};
  // Gradients, on the scale-free error max|g - g_ref| / max|g_ref| per tensor and step. Rounding
  // noise of a correct run is ~1e-7 (float32) and ~1e-15 (float64); a 1e-3 relative error on one
  // rank's gradient shows up as ~1e-3 / world_size.
  double gradient_float32 = 2e-5;
  double gradient_float64 = 1e-11;
};

// Tensors that may legitimately differ from single-device training in a mode, and why.
struct ExpectedDivergence {
  std::string mode;            // "dp" or "ddp"
  std::string tensor_pattern;  // ECMAScript regex over state names, e.g. "running_(mean|var)$"
  std::string reason;
  // The divergence exists only because BatchNorm is not synchronised: it does not apply when
  // the run uses SyncBN.
  bool only_without_sync_bn = false;
};

struct BuildRequest {
  int64_t seed = 0;
  std::string data_dir;  // empty: the scenario's default data
};

// A built scenario: a freshly initialised model and its training dataset.
struct ScenarioInstance {
  torch::nn::AnyModule model;
  std::shared_ptr<const data::Dataset> dataset;
};

// The held-out evaluation set of a classifier (training/evaluation.h), or why there is none here.
struct EvalSet {
  std::shared_ptr<const data::Dataset> dataset;  // null: no evaluation, `unavailable` says why
  std::string unavailable;
};

struct ScenarioSpec;
// Builds the dataset, then the model (see ScenarioSpec::build_model / build_dataset).
ScenarioInstance instantiate(const ScenarioSpec& spec, const BuildRequest& request);
// A freshly initialised model over a dataset built before: every phase of every mode starts from
// the same initial weights without loading the data again.
ScenarioInstance instantiate_model(const ScenarioSpec& spec, const BuildRequest& request,
                                   std::shared_ptr<const data::Dataset> dataset);

struct ScenarioSpec {
  std::string name;
  std::string summary;  // one line for `ddpbench list`
  std::string model_name;
  std::string dataset_name;
  int64_t global_batch = 0;       // default --batch-size
  int64_t steps = 0;              // default --steps
  int64_t seed = 0;               // default --seed
  std::string dtype = "float32";  // default --dtype
  AmpKind amp = AmpKind::kOff;    // --amp
  // The GradScaler of --amp fp16 (torch.amp.GradScaler's defaults unless set).
  GradScalerOptions grad_scaler;
  bool shuffle = true;  // DistributedSampler(shuffle=...)
  bool sampler_drop_last = false;
  LossKind loss = LossKind::kCrossEntropy;
  // CrossEntropyLoss(label_smoothing=...): the target's probability mass spread by this much over
  // every class (cross-entropy only).
  double label_smoothing = 0.0;
  OptimizerSpec optimizer;
  // torch.nn.utils.clip_grad_norm_(parameters, max_norm) with this max_norm, applied by the step
  // loop to the gradients every mode trains with (after the mode's reduction, before the
  // optimizer); unset: no clipping.
  std::optional<double> clip_grad_norm;
  Tolerances tolerances;
  std::vector<ExpectedDivergence> divergences;
  // Gradient accumulation micro-steps per optimizer step in dp and ddp (default
  // --accumulation-steps); global_batch is the batch of the whole optimizer step.
  int64_t accumulation_steps = 1;
  // Model name understood by reference/torch_ddp_oracle.py ("linear", "toy_cnn", "resnet18",
  // "torchscript": torch.jit.load(model_file)); empty when the oracle cannot rebuild this model.
  std::string torch_oracle_model;
  // --model FILE: the TorchScript file trained instead of the scenario's model, as given (the
  // report names it by content hash in model_name); empty for a built-in model.
  std::string model_file;
  // What the report says of that file (models/script_model.h, describe_script_model).
  std::string model_notes;
  // --data FILE (or DATA.FILE): the torch.save file of tensors trained on instead of the
  // scenario's data (inputs/data_file.h); empty: the scenario's data.
  std::string data_file;
  // --input-shape and its companions (or the DATA.* keys): synthetic data of the declared shape
  // instead of the scenario's (inputs/synthetic_data.h); not requested() on every built-in.
  data::SyntheticTensorsShape synthetic;
  // DDP converts every BatchNorm to SyncBN (like convert_sync_batchnorm), and the scenario
  // then declares equality with single-device training for DDP.
  bool sync_bn = false;
  // MODEL.CHANNELS_LAST: 4-D parameters, buffers and inputs in channels_last memory format
  // (memory_format.h); every mode trains so, and the oracle too.
  bool channels_last = false;
  // Parameters the model's forward uses in more than one place, each registered once (nanoGPT's
  // output projection tied to its token embedding: wte.weight). DDP reduces each once, as
  // PyTorch's does; the `tied` fault reduces one a second time. Empty for a --model file.
  std::vector<std::string> tied_parameters;

  // A freshly initialised model. Seeds the global torch generator with `seed` first (model
  // init uses libtorch's default initialisers, which draw from it), so every rank builds the
  // same weights and they match Python's for the same seed.
  std::function<torch::nn::AnyModule(int64_t seed)> build_model;

  // Whether build_dataset reads --data-dir: a scenario on generated data refuses the flag rather
  // than ignore it (a run would say it used files it never opened).
  bool reads_data_dir = false;

  // The training dataset. Uses keyed or local generators only, never the global one.
  // Throws InputError for unusable data (missing or corrupt files).
  std::function<std::shared_ptr<const data::Dataset>(const BuildRequest&)> build_dataset;

  // Set when the scenario cannot run on this machine (e.g. its dataset package is absent):
  // returns the reason, which the CLI prints as a skip. Empty function = always available.
  std::function<std::optional<std::string>(const BuildRequest&)> unavailable_reason;

  // Set only on a scenario configured from a file or KEY VALUE overrides (scenario_config.h):
  // the built-in it starts from, and how it was configured ("--config f.yaml TRAIN.STEPS 2"),
  // so a report says what defined it. Both empty on a built-in.
  std::string base;
  std::string configured_by;
  // The evaluation pass after the check phase (training/evaluation.h): a held-out split, never
  // training samples, without augmentation. Empty for regression scenarios (no accuracy to
  // measure), which then report the pass as skipped with that reason.
  std::function<EvalSet(const BuildRequest&)> build_eval_dataset;
  int64_t eval_batch = 64;  // samples per evaluation batch (per rank under DDP)
  int64_t eval_size = 512;  // default --eval-size: the first samples of the held-out split
};

}  // namespace ddpbench::scenarios
