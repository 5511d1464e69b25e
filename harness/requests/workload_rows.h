// workload_rows.h — what trains and how: the scenario or model, its data, steps, batch, seed, dtype
// and mixed precision. Rows of the run options table (run_options.h, which walks every group in
// --help's order; run_option.h says what a row holds).
#pragma once

#include "input_bounds.h"
#include "requests/flag_choices.h"
#include "requests/run_option.h"
#include "requests/run_request.h"

namespace ddpbench::requests {

// What trains: the scenario or model, and its data.
template <typename V, typename R>
void workload_options(V& v, R& r) {
  v(option("--scenario", "Scenario name (see `ddpbench list`)")
        .reported_as("scenario")
        .written_by_command(),
    r.scenario);
  v(option("--config",
           "Scenario file (YAML) naming its built-in base; `ddpbench list --yaml NAME` prints one")
        .excluding("--scenario")
        .reported_as("scenario_yaml")
        .written_by_command(),
    r.config);
  v(option("overrides",
           "KEY VALUE pairs over the scenario's keys, e.g. TRAIN.BATCH_SIZE 128 OPTIM.BASE_LR 0.1 "
           "(`ddpbench list --keys`); flags such as --batch-size win")
        .reported_as("scenario_yaml")
        .written_by_command(),
    r.overrides);
  v(option("--model",
           "TorchScript file (torch.jit.script(model).save) trained instead of the scenario's "
           "model; the scenario still gives the optimizer, and the data and loss unless --data or "
           "--input-shape replace them")
        .path("pass the .pt file torch.jit.script(model).save wrote")
        .key("MODEL.FILE")
        .reported_as("model"),
    r.model);
  v(option("--data",
           "torch.save file of {\"inputs\": Tensor[N,...], \"targets\": Tensor[N]} trained on "
           "instead of the scenario's data (no evaluation split)")
        .path("pass the .pt file torch.save({\"inputs\": x, \"targets\": y}, FILE) wrote")
        .key("DATA.FILE")
        .reported_as("dataset"),
    r.data_file);
  // Synthetic data for a model that comes without any, and the loss. Each sets a scenario key,
  // whose parser checks the text (scenarios/scenario_keys.cpp), so a flag and a file cannot
  // disagree on what a value means.
  v(option("--input-shape",
           "Train on synthetic data: one sample's input shape, e.g. 3,32,32 (with --num-classes "
           "or --target-shape)")
        .key("DATA.INPUT_SHAPE")
        .reported_as("scenario_yaml"),
    r.input_shape);
  v(option("--input-dtype",
           "Synthetic inputs: float32 (normal, in the run's dtype) or int64 token ids below "
           "--vocab-size")
        .choices({"float32", "int64"})
        .key("DATA.INPUT_DTYPE")
        .reported_as("scenario_yaml"),
    r.input_dtype);
  v(option("--vocab-size", "Synthetic int64 inputs: ids are drawn below it")
        .typed("INT")
        .key("DATA.VOCAB_SIZE")
        .reported_as("scenario_yaml"),
    r.vocab_size);
  v(option("--num-classes",
           "Synthetic class-label targets in [0, N) (loss cross_entropy by default)")
        .typed("INT")
        .key("DATA.NUM_CLASSES")
        .reported_as("scenario_yaml"),
    r.num_classes);
  v(option("--target-shape",
           "Synthetic regression targets of this shape per sample, e.g. 10 (loss mse by default)")
        .key("DATA.TARGET_SHAPE")
        .reported_as("scenario_yaml"),
    r.target_shape);
  v(option("--loss", "Loss: " + joined(loss_choices()) +
                         " (default: the scenario's, or the synthetic targets')")
        .choices(loss_choices())
        .key("LOSS.NAME")
        .reported_as("loss"),
    r.loss);
}

// How it trains: steps, batch, seed, sampler, dtype and mixed precision.
template <typename V, typename R>
void training_options(V& v, R& r) {
  v(option("--steps",
           "Training steps: checked steps, and timed steps after --warmup (default: the "
           "scenario's)")
        .integers(1, kMaxSteps)
        .shows("")  // 0 stands for "the scenario's", which the text says
        .reported_as("steps"),
    r.steps);
  v(option("--batch-size",
           "Global batch size, all ranks together (default: the scenario's; `scale`: at the "
           "largest world size)")
        .integers(1, kMaxBatch)
        .shows("")
        .reported_as("global_batch"),
    r.batch_size);
  v(option("--seed", "Seed for init, shuffle and augmentation (default: the scenario's)")
        .integers(0, kNoUpperBound)
        .shows("")
        .reported_as("seed"),
    r.seed);
  v(option("--drop-last",
           "DistributedSampler(drop_last=True): drop the tail of each epoch instead of padding it "
           "with duplicates")
        .reported_as("sampler.drop_last"),
    r.drop_last);
  v(option("--dtype", "float32 or float64 (default: the scenario's)")
        .choices({"float32", "float64"})
        .reported_as("dtype"),
    r.dtype);
  v(option("--amp",
           "Automatic mixed precision in every mode: forward and loss under autocast to bf16, or "
           "fp16 with a GradScaler; parameters stay float32 (default: the scenario's, off)")
        .choices(amp_choices())
        .key("TRAIN.AMP")
        .reported_as("amp"),
    r.amp);
  v(option("--grad-scaler-init", "--amp fp16: the GradScaler's initial scale (default 65536)")
        .typed("NUMBER")
        .key("TRAIN.GRAD_SCALER_INIT")
        .reported_as("scenario_yaml"),
    r.grad_scaler_init);
  v(option("--growth-interval",
           "--amp fp16: clean steps before the GradScaler doubles its scale (default 2000)")
        .typed("INT")
        .key("TRAIN.GRAD_SCALER_GROWTH_INTERVAL")
        .reported_as("scenario_yaml"),
    r.growth_interval);
  v(option("--data-dir", "Dataset directory (default: the scenario's data)")
        .reported_as("data_dir"),
    r.data_dir);
}

}  // namespace ddpbench::requests
