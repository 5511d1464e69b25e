// prepare_run.cpp — see prepare_run.h.
#include "run/prepare_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <cctype>

#include "comm/backend_support.h"
#include "comm/mpi_communicator.h"
#include "errors.h"
#include "modes/sync_bn/sync_batch_norm.h"
#include "run/resolve_run.h"
#include "run/resume.h"
#include "scenarios/models/script_model.h"
#include "training/evaluation.h"
#include "training/mode_phases.h"

namespace ddpbench::run {
namespace {

using modes::ModeKind;

// Under an external launcher the world size is the launcher's; a --gpus that says otherwise is
// a mistake, not a preference.
void check_world_size(const RunRequest& request, const launch::WorldInfo& world) {
  if (request.world_size_given && request.world_size != world.world_size) {
    throw InputError(fmt::format(
        "--gpus {} contradicts the launcher's world of {} ranks ({}): under an external "
        "launcher the world size comes from it; drop --gpus or start {} ranks",
        request.world_size, world.world_size, launch::launcher_name(world.launcher),
        request.world_size));
  }
}

// Uneven rank batches (data/batch_plan.h) where a rank runs out of batches within the run: what
// the exact reference models of a joined rank, and where a `join` fault can fire.
void check_join_fits(const training::RunSetup& setup, torch::nn::Module& model,
                     const data::GlobalBatchPlan& plan) {
  const int64_t steps = std::max(setup.check_steps, setup.warmup_steps + setup.perf_steps);
  const int64_t first_join = plan.rank_steps_per_epoch(0);  // rank 0's batch is the largest
  const bool runs_out = plan.uneven() && first_join < plan.steps_per_epoch() && steps > first_join;
  if (runs_out && setup.has_mode(ModeKind::kZero)) {
    throw InputError(fmt::format(
        "global batch {} over {} ranks ({} per rank) makes rank 0 run out of batches at step {} "
        "of each epoch (Join), which the zero mode does not model: pass --steps {} or fewer, or "
        "a --batch-size that {} divides",
        setup.global_batch, setup.world_size, fmt::join(plan.local_batches(), ","), first_join,
        first_join, setup.world_size));
  }
  const bool joins = runs_out && setup.has_mode(ModeKind::kDdp);
  if (joins && setup.ddp.impl == modes::ddp::DdpImpl::kC10d) {
    // PyTorch's Reducer shadows a joined rank only inside DDP's Join context manager, whose
    // Python side (the joined rank's collectives) ddpbench does not drive.
    throw InputError(fmt::format(
        "global batch {} over {} ranks ({} per rank) makes rank 0 run out of batches at step {} "
        "of each epoch (Join), which --ddp-impl c10d does not drive: pass --steps {} or fewer, "
        "a --batch-size that {} divides, or --ddp-impl bucketed",
        setup.global_batch, setup.world_size, fmt::join(plan.local_batches(), ","), first_join,
        first_join, setup.world_size));
  }
  if (joins && !model.buffers().empty()) {
    // A joined rank runs no forward, so its buffers (BatchNorm statistics) go stale while the
    // others' advance; PyTorch then broadcasts them from the highest rank still training, and
    // neither is modelled by the exact reference.
    throw InputError(fmt::format(
        "global batch {} over {} ranks ({} per rank) makes rank 0 run out of batches at step {} "
        "of each epoch (Join), and scenario {} has buffers, whose joined-rank rule is not "
        "modelled: pass --steps {} or fewer, or a --batch-size that {} divides",
        setup.global_batch, setup.world_size, fmt::join(plan.local_batches(), ","), first_join,
        setup.spec->name, first_join, setup.world_size));
  }
  if (setup.export_batches && plan.uneven()) {
    // reference/torch_ddp_oracle.py cuts each exported global batch with chunk(K), which neither
    // gives 7,7,6-style chunks on every step nor knows which rank has joined.
    throw InputError(fmt::format(
        "--export-batches: the PyTorch oracle splits every global batch into equal rank chunks, "
        "and batch {} splits over {} ranks as {}: pass a --batch-size that {} divides",
        setup.global_batch, setup.world_size, fmt::join(plan.local_batches(), ","),
        setup.world_size));
  }
  if (setup.fault && setup.fault->kind == modes::FaultKind::kJoin) {
    const data::StepPosition pos = plan.locate(setup.fault->step);
    const int64_t rank_steps = plan.rank_steps_per_epoch(setup.fault->rank);
    if (rank_steps == plan.steps_per_epoch()) {
      throw InputError(fmt::format(
          "--inject-fault join: rank {} never runs out of batches ({} per rank: its batch is the "
          "smallest): pick a rank with a larger batch",
          setup.fault->rank, fmt::join(plan.local_batches(), ",")));
    }
    if (pos.step_in_epoch < rank_steps) {
      throw InputError(fmt::format(
          "--inject-fault join: rank {} still has a batch at step {} (it has {} of the epoch's {} "
          "steps, {} per rank): pick a step where it has run out, or a --batch-size that {} does "
          "not divide",
          setup.fault->rank, setup.fault->step, rank_steps, plan.steps_per_epoch(),
          fmt::join(plan.local_batches(), ","), setup.world_size));
    }
  }
}

// A TorchScript model's BatchNorm layers are not ddpbench's: the exact reference forwards each
// rank chunk on its own to model them (training/exact_reference.h), which covers dp and ddp, but
// no SyncBN conversion reaches them and no reference models their statistics per micro-batch;
// random draws are seeded per (step, rank chunk), not per micro-batch. Refused where they would
// be needed, instead of a FAIL that would be ddpbench's own.
void check_script_model(const training::RunSetup& setup,
                        const scenarios::models::ScriptModelImpl& script) {
  if (setup.sync_bn) {
    throw InputError(
        "--sync-bn does not apply to a --model file: ddpbench cannot convert a TorchScript "
        "model's BatchNorm layers, and a model converted with "
        "torch.nn.SyncBatchNorm.convert_sync_batchnorm does not script (measured on 1.13); "
        "drop --sync-bn (ddp is then judged against per-rank BatchNorm)");
  }
  const bool replicated = setup.world_size > 1 &&
                          (setup.has_mode(ModeKind::kDp) || setup.has_per_rank_mode());
  if (setup.accumulation_steps > 1 && replicated && !script.facts().random_ops.empty()) {
    throw InputError(fmt::format(
        "--accumulation-steps {}: the --model file draws random numbers in forward ({}), which "
        "ddpbench seeds per step and rank, not per micro-batch; use --accumulation-steps 1 or "
        "--gpus 1",
        setup.accumulation_steps, fmt::join(script.facts().random_ops, ", ")));
  }
  // Note [Buffers updated in forward] (training/exact_reference.h).
  const std::vector<std::string>& written = script.facts().mutated_buffers;
  if (!written.empty() && setup.world_size > 1 && setup.has_per_rank_mode() &&
      !setup.ddp.broadcast_buffers) {
    throw InputError(fmt::format(
        "--no-broadcast-buffers: the --model file updates {} in forward, and without the "
        "broadcast each rank's copy drifts from the others' step after step, which no exact "
        "reference models; drop --no-broadcast-buffers",
        fmt::join(written, ", ")));
  }
  if (!written.empty() && replicated && setup.accumulation_steps > 1) {
    throw InputError(fmt::format(
        "--accumulation-steps {}: the --model file updates {} in forward, once per micro-batch "
        "from rank 0's copy of the micro-step before, which no exact reference models yet; use "
        "--accumulation-steps 1",
        setup.accumulation_steps, fmt::join(written, ", ")));
  }
}

// The last line of an error (the TorchScript interpreter's message is its traceback).
std::string last_line(std::string why) {
  while (!why.empty() && std::isspace(static_cast<unsigned char>(why.back()))) why.pop_back();
  return why.substr(why.find_last_of('\n') + 1);
}

// What a failed forward or loss says: a c10::Error's message without its C++ backtrace (whose last
// line is a stack frame: "frame #14: <unknown function> + 0x88191"), and of that the last line,
// where TorchScript's interpreter puts the cause.
std::string cause_of(const std::exception& e) {
  const auto* error = dynamic_cast<const c10::Error*>(&e);
  return last_line(error != nullptr ? error->what_without_backtrace() : e.what());
}

#if TORCH_VERSION_MAJOR >= 2
namespace warning_api = c10::WarningUtils;
#else
namespace warning_api = c10::Warning;
#endif

// Swallows libtorch's warnings while the first sample is probed, and restores the handler after:
// a probe that fails says why in its one line (the mismatch warning before it, through glog,
// printed "Logging before InitGoogleLogging()" and two more lines), and one that passes runs
// the same ops again in training, warnings and all.
class ProbeWarningsSilenced : public c10::WarningHandler {
 public:
  ProbeWarningsSilenced() : previous_(warning_api::get_warning_handler()) {
    warning_api::set_warning_handler(this);
  }
  ~ProbeWarningsSilenced() override { warning_api::set_warning_handler(previous_); }
  ProbeWarningsSilenced(const ProbeWarningsSilenced&) = delete;
  ProbeWarningsSilenced& operator=(const ProbeWarningsSilenced&) = delete;
#if TORCH_VERSION_MAJOR >= 2
  void process(const c10::Warning& /*warning*/) override {}
#else
  void process(const c10::SourceLocation& /*where*/, const std::string& /*message*/,
               bool /*verbatim*/) override {}
#endif

 private:
  c10::WarningHandler* previous_;
};

// One forward and loss of the first training sample, in eval mode and without autograd, before
// anything starts: a --model that does not fit the data, or --data that does not fit the model or
// the loss, says so here, naming the shapes. Returns how many values the model outputs for it.
int64_t check_first_sample(const training::RunSetup& setup, const data::Dataset& dataset,
                           torch::nn::AnyModule& model) {
  const data::Example example = dataset.get(0, 0);
  at::Tensor input = example.input.unsqueeze(0);
  at::Tensor target = example.target.unsqueeze(0);
  if (input.is_floating_point()) input = input.to(setup.context.dtype);
  if (target.is_floating_point()) target = target.to(setup.context.dtype);
  const scenarios::ScenarioSpec& spec = *setup.spec;
  const std::string flag = !spec.model_file.empty()  ? "--model"
                           : !spec.data_file.empty() ? "--data"
                                                     : "--input-shape";
  const std::string data = !spec.data_file.empty()      ? "--data"
                           : spec.synthetic.requested() ? spec.dataset_name
                                                        : spec.name + "'s data";
  torch::NoGradGuard no_grad;
  const ProbeWarningsSilenced quiet;
  model.ptr()->to(setup.context.dtype);
  model.ptr()->eval();
  at::Tensor output;
  try {
    output = model.forward(input);
  } catch (const std::exception& e) {
    throw InputError(fmt::format(
        "{}: forward fails on a batch of shape {} {} ({}): {}; pass a model and data that fit",
        flag, input.sizes(), c10::toString(input.scalar_type()), data, cause_of(e)));
  }
  // Synthetic token ids are drawn below --vocab-size, and the first sample need not hold the
  // largest: an embedding smaller than that failed mid-run (exit 3, a TorchScript traceback cut
  // before its cause). Every id at the largest shows it here.
  const int64_t vocab = spec.synthetic.vocab_size;
  if (spec.synthetic.requested() && vocab > 0 && !input.is_floating_point()) {
    try {
      model.forward(torch::full_like(input, vocab - 1));
    } catch (const std::exception& e) {
      throw InputError(fmt::format(
          "--vocab-size {}: forward fails on token id {}, the largest the synthetic data draws: "
          "{}; pass a --vocab-size no larger than the model's embedding holds",
          vocab, vocab - 1, cause_of(e)));
    }
  }
  // One sample's label cannot show that a later one is past the model's outputs.
  const int64_t classes = spec.synthetic.num_classes;
  if (classes > 0 && (output.dim() != 2 || output.size(1) < classes)) {
    throw InputError(fmt::format(
        "--num-classes {}: the model's output for one sample has shape {}, not [1, N] with N >= "
        "{}; pass the number of classes the model's last layer outputs",
        classes, output.sizes(), classes));
  }
  try {
    scenarios::compute_loss(setup.spec->loss, output, target);
  } catch (const std::exception& e) {
    throw InputError(fmt::format(
        "{}: {}'s loss {} fails on an output of shape {} and a target of shape {} {} ({}): {}; "
        "pass a model and data that fit the loss",
        flag, setup.spec->name, scenarios::loss_name(setup.spec->loss), output.sizes(),
        target.sizes(), c10::toString(target.scalar_type()), data, cause_of(e)));
  }
  model.ptr()->train();
  return output.numel();
}

// The default evaluation pass (512 samples for most scenarios) is sized for classifier heads; a
// model with millions of outputs per sample spent minutes in it, silently (issue 51 defect 16).
// Unless --eval-size was given, the pass computes at most this many output values.
constexpr int64_t kDefaultEvalOutputs = int64_t{1} << 24;

void size_evaluation_by_output(const RunRequest& request, int64_t outputs_per_sample,
                               training::RunSetup& setup) {
  if (request.eval_size >= 0 || outputs_per_sample <= 0 || setup.eval_size <= 0) return;
  if (setup.eval_size <= kDefaultEvalOutputs / outputs_per_sample) return;
  const int64_t capped = std::max<int64_t>(1, kDefaultEvalOutputs / outputs_per_sample);
  setup.eval_size_note = fmt::format(
      "the evaluation pass takes {} sample(s), not the default {}: the model outputs {} values "
      "per sample, and the default pass computes at most {}; --eval-size N chooses",
      capped, setup.eval_size, outputs_per_sample, kDefaultEvalOutputs);
  setup.eval_size = capped;
}

}  // namespace

void check_model_fits(const training::RunSetup& setup, torch::nn::Module& model) {
  const auto* script = dynamic_cast<const scenarios::models::ScriptModelImpl*>(&model);
  if (script != nullptr) check_script_model(setup, *script);
  if (setup.sync_bn && setup.has_mode(ModeKind::kDdp) &&
      modes::sync_bn::count_batchnorm(model) == 0) {
    throw InputError(
        fmt::format("--sync-bn: scenario {} has no BatchNorm layer to convert", setup.spec->name));
  }
  // Accumulating micro-steps normalise BatchNorm per micro-batch and update its running
  // statistics A times a step: no exact reference models that yet. A TorchScript model's layers
  // are not ddpbench's modules: its own analysis counts them.
  const int64_t bn = script != nullptr ? script->facts().batch_norm_layers
                                       : modes::sync_bn::count_batchnorm(model);
  if (setup.accumulation_steps > 1 && bn > 0) {
    throw InputError(
        fmt::format("--accumulation-steps {}: {} has {} BatchNorm layer(s), whose per-micro-batch "
                    "statistics no exact reference models; use --accumulation-steps 1{}",
                    setup.accumulation_steps,
                    script != nullptr ? "the --model file" : "scenario " + setup.spec->name, bn,
                    script != nullptr ? "" : " or a scenario without BatchNorm (e.g. grad_accum)"));
  }
  if (setup.fault &&
      (setup.fault->kind == modes::FaultKind::kBuffers ||
       setup.fault->kind == modes::FaultKind::kDpBuffers) &&
      model.buffers().empty()) {
    throw InputError(fmt::format(
        "--inject-fault {}: scenario {} has no buffers to get wrong; use a BatchNorm scenario "
        "such as cifar_resnet18",
        modes::fault_name(setup.fault->kind), setup.spec->name));
  }
}

namespace {

// Gradient accumulation needs every step's share of every rank to split into equal micro-batches;
// an epoch's short last batch (drop_last=False) may not. Said before training (exit 2), rather
// than by the step loop when the step comes (exit 3).
void check_micro_batches(const training::RunSetup& setup, const data::GlobalBatchPlan& plan) {
  const int64_t a = setup.accumulation_steps;
  const bool parallel = setup.has_per_rank_mode() || setup.has_mode(ModeKind::kDp);
  if (a == 1 || !parallel) return;
  // Each phase walks the plan from step 0; every epoch has the same batch sizes.
  const int64_t steps = std::max(setup.check_steps, setup.warmup_steps + setup.perf_steps);
  for (int64_t step = 0; step < std::min(steps, plan.steps_per_epoch()); ++step) {
    const int64_t per_rank = plan.samples_at(step) / setup.world_size;
    if (per_rank % a != 0) {
      throw InputError(fmt::format(
          "--accumulation-steps {}: step {} gives each rank {} samples (the epoch's last, short "
          "batch), which do not split into {} equal micro-batches; pick --batch-size and "
          "--steps so every step in the run is a full batch, or another --accumulation-steps",
          a, step, per_rank, a));
    }
  }
}

// The evaluation pass's set must exist at the asked size before anything trains (a bad
// --eval-size is exit 2 now, not a failure after training), and the eval fault needs the pass.
void check_evaluation(const RunRequest& request, const training::RunSetup& setup) {
  if (request.eval_size > 0 && !setup.spec->build_eval_dataset) {
    throw InputError(
        fmt::format("--eval-size: {} has no evaluation pass (not a classifier); drop --eval-size",
                    setup.spec->name));
  }
  if (setup.check_steps == 0) return;  // no trained model to evaluate
  std::string why;
  const bool runs = training::evaluation_set(setup, why) != nullptr;
  if (!runs && setup.fault && setup.fault->kind == modes::FaultKind::kEval) {
    throw InputError(fmt::format(
        "--inject-fault eval corrupts the evaluation pass, which this run skips ({}); use a "
        "classifier scenario and --eval-size > 0",
        why));
  }
}

}  // namespace

std::optional<PreparedRun> prepare_run(const RunRequest& request,
                                       const scenarios::ScenarioRegistry& registry,
                                       const std::optional<launch::WorldInfo>& world) {
  if (world) check_world_size(request, *world);
  training::RunSetup setup = resolve_run(
      request, registry, world ? std::optional<int64_t>(world->world_size) : std::nullopt);
  if (world) {
    // A rank is a DDP rank unless --modes names zero; rank 0 of an external launch also runs
    // single.
    if (!setup.has_per_rank_mode()) setup.modes.push_back(ModeKind::kDdp);
    // Rank r trains on cuda:(LOCAL_RANK mod device count), torchrun's convention.
    setup.context.device_slot = world->local_rank;
  }
  runtime::ExecutionContext context = runtime::configure_process(setup.context);
  if (world && context.on_cuda() && !setup.share_gpus &&
      world->local_rank >= context.gpus().usable_devices) {
    throw InputError(fmt::format(
        "rank {} has local rank {} and this node {} CUDA device(s): add --share-gpus to place "
        "several ranks on one device (with --backend gloo or mpi), or start fewer ranks per node",
        world->rank, world->local_rank, context.gpus().usable_devices));
  }
  if (setup.has_per_rank_mode()) {
    // The launching parent spawns the ranks itself, so it was not started by mpirun.
    comm::require_usable_backend(
        setup.backend, {context.gpus().usable_devices, world.has_value() && comm::mpi_launched()});
  }
  if (setup.spec->unavailable_reason) {
    if (auto reason = setup.spec->unavailable_reason(setup.request)) {
      if (!world || world->rank == 0) {
        fmt::print(stderr, "ddpbench: skipped scenario {}: {}\n", setup.spec->name, *reason);
      }
      return std::nullopt;
    }
  }

  std::shared_ptr<const data::Dataset> dataset = setup.spec->build_dataset(setup.request);
  scenarios::ScenarioInstance instance =
      scenarios::instantiate_model(*setup.spec, setup.request, dataset);
  data::GlobalBatchPlan plan =
      training::make_plan(setup, *dataset, setup.world_size, setup.global_batch);
  const modes::GradRecordKind grad = training::resolve_grad_record(setup, *instance.model.ptr());
  check_model_fits(setup, *instance.model.ptr());
  if (!setup.spec->model_file.empty() || !setup.spec->data_file.empty() ||
      setup.spec->synthetic.requested()) {
    size_evaluation_by_output(request, check_first_sample(setup, *dataset, instance.model),
                              setup);
  }
  check_micro_batches(setup, plan);
  if (!request.resume.empty()) {
    setup.resume = load_resume(request.resume, setup, registry, *instance.model.ptr(), plan);
  }
  check_evaluation(request, setup);
  check_join_fits(setup, *instance.model.ptr(), plan);
  return PreparedRun{std::move(setup),    std::move(context), std::move(dataset),
                     std::move(instance), std::move(plan),    grad};
}

}  // namespace ddpbench::run
