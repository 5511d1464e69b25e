// floor_measurement.h — measures the rounding floor of Note [Rounding floor measured on the
// model] (compare/rounding_floor.h): a mode's exact reference trained again beside a twin in
// another precision on the run's plan, and the distance between the two, per step and tensor. The
// run's finishing asks for it only when a check failed at its fixed limit, so a passing run pays
// nothing; it costs one more reference run and one twin run of the checked steps.
#pragma once

#include "compare/rounding_floor.h"
#include "modes/single/single_path.h"
#include "training/phase_inputs.h"

namespace ddpbench::training {

// Note [Mixed precision free-running]: under --amp the exact reference rounds each rank's
// gradients to the autocast dtype as the rank does (Note [Mixed precision judged against its own
// reference]), and what is left between a mode and it is the float32 sum of those gradients over
// the ranks: bitwise equal at 2 ranks (a sum of two is one rounding in any order; measured:
// toy_cnn and cifar_resnet18 free-running, 10-20 steps), a last bit apart in many entries at 3 or
// more. Lockstep that stays one step's difference; free-running, the next forward casts the
// weights to bf16 or fp16, where a weight whose float32 value sits by a rounding boundary moves by
// a whole unit of the low precision, and the trajectories drift apart (cifar_resnet18, 3 ranks of
// 8 samples, bf16: ddp's loss 0.5% from the reference's at step 2, float32's 2e-5;
// reports/METRICS.md "Mixed precision free-running"). No fixed limit can be that wide and still
// fail a fault, so the drift is measured on the run's own model as a rounding floor, with its own
// twin: the reference itself, each step's summed gradients moved to a neighbouring float in every
// entry (ReferenceRule::nudge_gradients). The float32 twin (each rank chunk backpropagated on its
// own, summed in rank order) reorders the sum and so moves only the entries where order matters:
// measured on cifar_resnet18 above, its loss stayed bitwise the reference's at step 2 where
// ddp's had moved 0.5%, so a floor from it failed a correct run. The nudge moves every entry by
// as much as a reordering moves one, which is what makes it at least as strong. Its drift is the
// floor; the cap (float32's sqrt(unit roundoff)) leaves a drift past half the digits
// `incomparable`, never passed.

// Whether the run can measure a floor for the reference trained under `rule`: the twin cuts the
// global batch into the world's rank chunks, so it needs more than one rank, arithmetic that
// chunking does not change (not SyncBN's statistics over the ranks) and a loss that splits over
// the chunks. With accumulation each chunk's micro-batches are pieces of their own; under
// autocast each piece is cast afresh, as the reference does.
bool can_measure_floors(const RunSetup& setup, const modes::single::ReferenceRule& rule);

// The floors of the reference trained under `rule` over the run's checked steps, against a twin
// in the run's dtype that computes the same training with the rank gradients summed as ranks
// sum them (each rank chunk forwarded and backpropagated on its own, the chunks' gradients added
// rank by rank, then divided by K: ReferenceRule::backward_rank_by_rank), where the reference's
// one backward adds them the other way. Lockstep: the twin is given the reference's state before
// every step. Free-running: it trains its own trajectory from the same start, which the model's
// conditioning separates from the reference's as it does the modes'. A twin whose step from the
// reference's own state differs by more than rounding (a model whose samples meet outside
// BatchNorm) measures nothing: the floors come back empty, `how` saying why.
// `gradient_limit` is the updates check's limit (lockstep's update_errors).
compare::MeasuredFloors measure_floors(const PhaseInputs& in,
                                       const modes::single::ReferenceRule& rule,
                                       double gradient_limit);

}  // namespace ddpbench::training
