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
// fail a fault, so the drift is measured on the run's own model as a rounding floor, with a twin
// of its own: the reference with each rank chunk backpropagated on its own and summed rank by
// rank, then every entry of each step's sum moved up or down, as drawn, by one unit in the last
// place of the sum of the chunks' magnitudes (ReferenceRule::nudge_gradients). A sum of the
// ranks' terms in another order moves an entry by up to about that much, which is more than a
// unit of the entry itself where the terms cancel. Two weaker twins failed correct runs: the
// float32 summation-order twin alone (measured on cifar_resnet18 above, its loss stayed bitwise
// the reference's at step 2 where ddp's had moved 0.5%), and a nudge by one unit of the entry
// itself (tiny_resnet, 3 ranks of 2 samples, bf16, 6 steps: false FAILs at 4 of seeds 0-19;
// reports/METRICS.md "Parted trajectories"). Its drift is the floor; the cap (float32's
// sqrt(unit roundoff)) leaves a drift past half the digits `incomparable`, never passed, and
// Note [Parted trajectories] ends the comparison where a trajectory left the reference's.
//
// Note [Parted trajectories]: free-running under autocast, drift is not a smooth function of
// rounding. A weight whose float32 value a rounding carries across a bf16 boundary moves the
// forward by a whole bf16 unit, and whether a run carries one, and which, is a draw: on a small,
// BatchNorm-heavy model a single crossing moves gradients by O(1) of their scale within a step
// while the steps before agreed to 1e-7 (tiny_resnet above, seed 0: ddp's layer3.0.conv1.weight
// gradient 1.2 of its scale at step 1, the twin's under a quarter of that there; seed 49: ddp
// 4.3e-3 at step 3, the twin within 3e-7 until step 4). No twin bounds the mode's draw, so: from
// the first step at which the twin's loss or any gradient is past the cap of its scale, or the
// judged mode's own is past it after the first step (every mode casts the same weights at the
// first step), every item beyond its fixed limit is `incomparable`, and the mode is judged at the
// steps before. The price: a fault that moves a gradient past half the float32 digits after the
// first step reads as a parting, NOT JUDGED (never PASS; an injected one FAILs as unseen); one
// below the cap is still held to 4 x the floor, and --comparison lockstep, where every step
// starts from the reference's state, judges every step.

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
