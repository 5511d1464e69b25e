// evaluation.cpp — see evaluation.h.
#include "training/evaluation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <numeric>
#include <stdexcept>

#include "data/dataset_prefix.h"
#include "data/distributed_sampler.h"
#include "modes/common/forward_draws.h"
#include "modes/common/model_state.h"
#include "reports/run/verdict.h"
#include "scenarios/memory_format.h"

namespace ddpbench::training {
namespace {

using Forward = std::function<at::Tensor(const at::Tensor&)>;

// Per-sample cross-entropy and correctness of `indices`, evaluated in batches of spec.eval_batch
// (inputs in the spec's memory format) through
// `forward`. The loss is taken per sample (reduction none) so that any grouping of samples into
// batches, ranks or duplicates sums the same terms. Token sequences are padded to the longest of
// the whole set, so a sample's padding, and with it its logits, does not depend on which batch or
// rank evaluates it.
//
// A model whose forward draws random numbers (dropout kept on in eval, noise) is evaluated one
// sample at a time, each under its own key (modes::kEvaluationStep, forward_draws.h), so that the
// mode and the single-device evaluation draw the same numbers for every sample.
EvalSamples evaluate_indices(const Forward& forward, const torch::nn::Module& model,
                             const data::Dataset& set, const std::vector<int64_t>& indices,
                             const scenarios::ScenarioSpec& spec,
                             const runtime::ExecutionContext& context) {
  EvalSamples out;
  int64_t batch = spec.eval_batch;
  const c10::MemoryFormat format = scenarios::input_memory_format(spec);
  std::vector<int64_t> whole(static_cast<size_t>(set.size()));
  std::iota(whole.begin(), whole.end(), int64_t{0});
  const int64_t pad_to = data::padded_length(set, whole);
  modes::ForwardDraws draws(model);
  if (draws.seeds()) batch = 1;
  for (size_t start = 0; start < indices.size(); start += static_cast<size_t>(batch)) {
    const size_t end = std::min(indices.size(), start + static_cast<size_t>(batch));
    const std::vector<int64_t> chunk(indices.begin() + static_cast<std::ptrdiff_t>(start),
                                     indices.begin() + static_cast<std::ptrdiff_t>(end));
    // Epoch 0: the evaluation transform has no augmentation, so the epoch changes nothing.
    data::Batch b = context.place_batch(data::collate(set, chunk, 0, pad_to));
    b.inputs = scenarios::in_memory_format(b.inputs, format);
    torch::NoGradGuard no_grad;
    const at::Tensor logits = draws.forward([&] { return forward(b.inputs); }, b.inputs.device(),
                                            modes::kEvaluationStep, chunk.front());
    // A language model's logits [B, V, T] score every position: a sample's loss is the mean over
    // its positions, and it is correct when every next token is predicted.
    at::Tensor loss = torch::nn::functional::cross_entropy(
        logits, b.targets,
        torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
    at::Tensor correct = logits.argmax(1).eq(b.targets);
    if (loss.dim() > 1) {
      loss = loss.flatten(1).mean(1);
      correct = correct.flatten(1).all(1);
    }
    loss = loss.to(at::kDouble).cpu().contiguous();
    correct = correct.to(at::kByte).cpu().contiguous();
    out.loss.insert(out.loss.end(), loss.data_ptr<double>(),
                    loss.data_ptr<double>() + loss.numel());
    out.correct.insert(out.correct.end(), correct.data_ptr<uint8_t>(),
                       correct.data_ptr<uint8_t>() + correct.numel());
  }
  return out;
}

std::vector<int64_t> all_indices(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

// The single-device evaluation the checks compare with: a fresh model of the scenario, loaded
// with `trained`'s parameters and buffers by name, evaluated on one device over the whole set in
// order. It shares no code with any mode's evaluation forward.
EvalSamples single_device_samples(const RunSetup& setup, const runtime::ExecutionContext& context,
                                  const torch::nn::Module& trained, const data::Dataset& set) {
  torch::nn::AnyModule fresh = scenarios::fresh_model(*setup.spec, setup.request.seed);
  context.place_model(*fresh.ptr());
  const modes::NamedTensors state = modes::capture_state(trained);
  {
    torch::NoGradGuard no_grad;
    auto params = fresh.ptr()->named_parameters();
    auto buffers = fresh.ptr()->named_buffers();
    for (const auto& [name, t] : state) {
      at::Tensor* target = params.find(name);
      if (target == nullptr) target = buffers.find(name);
      if (target == nullptr) {
        throw std::logic_error(fmt::format(
            "evaluation: the trained model's {} is not in a fresh {}", name, setup.spec->name));
      }
      target->copy_(t);
    }
  }
  fresh.ptr()->eval();
  return evaluate_indices([&fresh](const at::Tensor& x) { return fresh.forward(x); }, *fresh.ptr(),
                          set, all_indices(set.size()), *setup.spec, context);
}

const scenarios::Tolerance& run_tolerance(const RunSetup& setup) {
  return setup.context.dtype == at::kDouble ? setup.spec->tolerances.float64
                                            : setup.spec->tolerances.float32;
}

std::string tally_text(const EvalTally& t) {
  return fmt::format("{:.0f}/{} correct, mean loss {:.9g}", t.correct, t.count, t.mean_loss());
}

}  // namespace

void EvalTally::add(double sample_loss, bool sample_correct) {
  loss += sample_loss;
  correct += sample_correct ? 1.0 : 0.0;
  ++count;
}

EvalTotals tally_share(const EvalSamples& samples, const std::vector<bool>& padding,
                       bool drop_last_sample) {
  if (samples.loss.size() != padding.size() || samples.correct.size() != padding.size()) {
    throw std::logic_error("evaluation: per-sample results and padding flags differ in length");
  }
  EvalTotals t;
  size_t n = padding.size();
  if (drop_last_sample && n > 0) --n;
  for (size_t j = 0; j < n; ++j) {
    t.all.add(samples.loss[j], samples.correct[j] != 0);
    if (!padding[j]) t.unique.add(samples.loss[j], samples.correct[j] != 0);
  }
  return t;
}

at::Tensor totals_to_payload(const EvalTotals& t) {
  return at::tensor({t.all.correct, t.all.loss, static_cast<double>(t.all.count), t.unique.correct,
                     t.unique.loss, static_cast<double>(t.unique.count)},
                    at::kDouble);
}

EvalTotals totals_from_payload(const at::Tensor& payload) {
  const at::Tensor p = payload.to(at::kDouble).cpu().contiguous();
  const double* v = p.data_ptr<double>();
  // Counts below 2^53 are exact in float64.
  return {{v[0], v[1], static_cast<int64_t>(std::llround(v[2]))},
          {v[3], v[4], static_cast<int64_t>(std::llround(v[5]))}};
}

EvalTotals expected_totals(const EvalSamples& whole_set, int64_t ranks) {
  const auto n = static_cast<int64_t>(whole_set.loss.size());
  EvalTotals t;
  for (int64_t i = 0; i < n; ++i) {
    t.unique.add(whole_set.loss[static_cast<size_t>(i)], whole_set.correct[static_cast<size_t>(i)]);
  }
  data::SamplerOptions o;
  o.dataset_size = n;
  o.num_replicas = ranks;
  o.shuffle = false;
  const data::DistributedSampler sampler(o);
  for (int64_t i : sampler.epoch_order()) {
    t.all.add(whole_set.loss[static_cast<size_t>(i)], whole_set.correct[static_cast<size_t>(i)]);
  }
  return t;
}

namespace {

// A reference that is not finite (BatchNorm running statistics from a few samples can send an
// evaluation loss to inf or NaN) leaves nothing to judge the mode against: not comparable, which
// neither passes nor fails the run. Only the mode being non-finite is its failure.
reports::CheckRecord not_comparable(reports::CheckRecord c, const EvalTotals& mode,
                                    const EvalTotals& reference, bool padded) {
  c.incomparable = padded ? 6 : 3;
  c.detail = fmt::format(
      "not comparable: the reference's evaluation loss is not finite (single-device evaluation "
      "of the same weights: mean loss {:g}; this mode: {:g}), so its figures cannot be judged",
      reference.all.mean_loss(), mode.all.mean_loss());
  c.status = reports::check_status(c, {});
  return c;
}

}  // namespace

reports::CheckRecord evaluation_check(const EvalTotals& mode, const EvalTotals& reference,
                                      const scenarios::Tolerance& tolerance,
                                      const std::string& expected_reason) {
  // Three items per judged tally: the count and the correct predictions (exact: any difference
  // is an infinite error) and the mean loss (within atol + rtol * |ref|, as a ratio).
  reports::CheckRecord c;
  c.name = reports::Stage::kEvaluation;
  c.measure = reports::Measure::kTolerance;
  c.atol = tolerance.atol;
  c.rtol = tolerance.rtol;
  c.limit = 1.0;
  const bool padded_reference = reference.all.count != reference.unique.count;
  if (!std::isfinite(reference.all.loss) || !std::isfinite(reference.unique.loss)) {
    return not_comparable(std::move(c), mode, reference, padded_reference);
  }
  std::vector<std::string> problems;
  int64_t outside = 0;
  double within_error = 0.0, outside_error = 0.0;
  auto item = [&](bool ok, double error, std::string problem) {
    ++c.items;
    if (ok) {
      within_error = std::max(within_error, error);
    } else {
      ++outside;
      outside_error = std::max(outside_error, std::isnan(error) ? INFINITY : error);
      problems.push_back(std::move(problem));
    }
  };
  auto judge = [&](const EvalTally& a, const EvalTally& b, const char* which) {
    item(a.count == b.count, a.count == b.count ? 0.0 : INFINITY,
         fmt::format("{}{} samples counted, single-device {}", which, a.count, b.count));
    item(a.correct == b.correct, a.correct == b.correct ? 0.0 : INFINITY,
         fmt::format("{}{:.0f} correct, single-device {:.0f}", which, a.correct, b.correct));
    const double diff = std::abs(a.mean_loss() - b.mean_loss());
    const double ref = std::abs(b.mean_loss());
    const double bound = tolerance.atol + tolerance.rtol * ref;
    const double ratio = diff == 0 ? 0.0 : bound > 0 ? diff / bound : INFINITY;
    item(ratio <= 1.0, ratio,
         fmt::format("{}mean loss {:.9g}, single-device {:.9g}", which, a.mean_loss(),
                     b.mean_loss()));
    if (std::isfinite(ref)) c.ref_max_abs = std::max(c.ref_max_abs, ref);
    if (!(diff <= c.max_abs_diff)) c.max_abs_diff = diff;
    const double rel = ref > 0 ? diff / ref : diff;
    if (!(rel <= c.max_rel_diff)) c.max_rel_diff = rel;
  };
  // Without padding the two tallies must be one: the distinct samples are judged (and named)
  // apart only when there is padding or when the mode's two tallies disagree.
  const bool padded = padded_reference;
  const bool one_tally = mode.unique.count == mode.all.count &&
                         mode.unique.correct == mode.all.correct &&
                         mode.unique.loss == mode.all.loss;
  judge(mode.all, reference.all, padded ? "with padding: " : "");
  if (padded || !one_tally) judge(mode.unique, reference.unique, "without padding: ");
  // A declared divergence's items are not the check's error: the others' worst is.
  c.error = outside > 0 && expected_reason.empty() ? outside_error : within_error;
  if (outside == 0) {
    c.detail = fmt::format(
        "{} as a single-device evaluation of the same weights; counts and correct predictions "
        "exact",
        tally_text(mode.all));
  } else if (!expected_reason.empty()) {
    // Declared divergent: the error of the divergent items is not the check's.
    c.divergent = outside;
    c.detail = fmt::format("{}: {}", expected_reason, fmt::join(problems, "; "));
  } else {
    c.outside = outside;
    c.detail = fmt::format(
        "{} (single-device evaluation of the same weights; counts and correct "
        "predictions exact)",
        fmt::join(problems, "; "));
  }
  c.status = reports::check_status(c, {});
  return c;
}

reports::EvaluationRecord evaluation_record(const EvalTotals& t, const std::string& dataset) {
  reports::EvaluationRecord r;
  r.status = reports::EvaluationStatus::kDone;
  r.dataset = dataset;
  r.samples = t.unique.count;
  r.count = t.all.count;
  r.padded = t.all.count - t.unique.count;
  r.accuracy = t.all.accuracy();
  r.mean_loss = t.all.mean_loss();
  r.accuracy_without_padding = t.unique.accuracy();
  r.mean_loss_without_padding = t.unique.mean_loss();
  const std::string head = fmt::format("accuracy {:.4f} ({:.0f} of {}), mean loss {:.6g}",
                                       r.accuracy, t.all.correct, r.count, r.mean_loss);
  if (r.padded == 0) {
    r.summary = head + "; no padding duplicates";
  } else {
    r.summary = fmt::format(
        "{}; {} padding duplicate(s) changed accuracy by {:+.6f} and the mean loss by {:+.6g} "
        "(without them: accuracy {:.4f} of {} samples, mean loss {:.6g})",
        head, r.padded, r.accuracy - r.accuracy_without_padding,
        r.mean_loss - r.mean_loss_without_padding, r.accuracy_without_padding, r.samples,
        r.mean_loss_without_padding);
  }
  return r;
}

reports::EvaluationRecord skipped_evaluation(const std::string& reason) {
  reports::EvaluationRecord r;
  r.status = reports::EvaluationStatus::kSkipped;
  r.skipped_reason = reason;
  return r;
}

std::shared_ptr<const data::Dataset> evaluation_set(const RunSetup& setup, std::string& why) {
  const scenarios::ScenarioSpec& spec = *setup.spec;
  if (!spec.build_eval_dataset) {
    why = spec.loss == scenarios::LossKind::kCrossEntropy
              ? "the scenario has no held-out set"
              : "not a classifier (regression loss): no accuracy to measure";
    return nullptr;
  }
  if (setup.eval_size == 0) {
    why = "--eval-size 0";
    return nullptr;
  }
  scenarios::EvalSet set = spec.build_eval_dataset(setup.request);
  if (!set.dataset) {
    why = set.unavailable;
    return nullptr;
  }
  return std::make_shared<data::DatasetPrefix>(set.dataset, setup.eval_size, "--eval-size");
}

void evaluate_local_mode(const RunSetup& setup, const runtime::ExecutionContext& context,
                         modes::GradientPath& path, bool data_parallel,
                         reports::EvaluationRecord& record,
                         std::vector<reports::CheckRecord>& checks) {
  std::string why;
  const std::shared_ptr<const data::Dataset> set = evaluation_set(setup, why);
  if (!set) {
    record = skipped_evaluation(why);
    return;
  }
  const EvalSamples samples =
      evaluate_indices([&path](const at::Tensor& x) { return path.eval_forward(x); }, path.module(),
                       *set, all_indices(set->size()), *setup.spec, context);
  // The `eval` fault under dp: the last gathered sample (the last replica's) is left out.
  const bool dropped = data_parallel && setup.fault && setup.fault->kind == modes::FaultKind::kEval;
  const EvalTotals totals =
      tally_share(samples, std::vector<bool>(samples.loss.size(), false), dropped);
  record = evaluation_record(totals, set->describe());
  if (!data_parallel) return;  // single's evaluation is the single-device evaluation
  const EvalSamples reference = single_device_samples(setup, context, path.module(), *set);
  checks.push_back(
      evaluation_check(totals, expected_totals(reference, 1), run_tolerance(setup), ""));
}

void evaluate_ddp_rank(const RunSetup& setup, const runtime::ExecutionContext& context,
                       modes::GradientPath& path, comm::Communicator& comm,
                       reports::EvaluationRecord& record,
                       std::vector<reports::CheckRecord>& checks) {
  std::string why;
  // Every rank decides alike (same flags, same files), so all or none join the collectives.
  const std::shared_ptr<const data::Dataset> set = evaluation_set(setup, why);
  if (!set) {
    if (comm.rank() == 0) record = skipped_evaluation(why);
    return;
  }
  data::SamplerOptions o;
  o.dataset_size = set->size();
  o.num_replicas = comm.world_size();
  o.shuffle = false;  // the evaluation loader's sampler, as in PyTorch's usual recipe
  const data::DistributedSampler sampler(o);
  const int64_t rank = comm.rank();
  const std::vector<int64_t> share = sampler.indices(rank);
  std::vector<bool> padding;
  for (size_t j = 0; j < share.size(); ++j) {
    padding.push_back(sampler.is_padding(rank, static_cast<int64_t>(j)));
  }
  // Every rank's share has num_samples >= 1 samples, so every rank makes the first evaluation
  // forward, which joins the buffer broadcast.
  const EvalSamples samples =
      evaluate_indices([&path](const at::Tensor& x) { return path.eval_forward(x); }, path.module(),
                       *set, share, *setup.spec, context);
  const bool dropped = modes::fault_active(setup.fault, modes::FaultKind::kEval, rank, 0);
  at::Tensor payload = totals_to_payload(tally_share(samples, padding, dropped));
  comm::allreduce_sum_blocking(comm, payload);
  if (rank != 0) return;
  const EvalTotals totals = totals_from_payload(payload);
  record = evaluation_record(totals, set->describe());
  // Rank 0 holds its final state: it is the buffer broadcast's source.
  const EvalSamples reference = single_device_samples(setup, context, path.module(), *set);
  std::string reason;
  if (!setup.ddp.broadcast_buffers && !path.module().buffers().empty()) {
    reason =
        "--no-broadcast-buffers: each rank evaluates with its own BatchNorm running statistics, "
        "the single-device evaluation with rank 0's";
  }
  checks.push_back(evaluation_check(totals, expected_totals(reference, comm.world_size()),
                                    run_tolerance(setup), reason));
}

}  // namespace ddpbench::training
