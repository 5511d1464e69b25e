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

// Whether the run can measure a floor for the reference trained under `rule`: the twin cuts the
// global batch into the world's rank chunks, so it needs more than one rank, arithmetic that
// chunking does not change (not SyncBN's whole-batch statistics), one pass per chunk (no autocast
// or its accumulation micro-steps) and a loss that splits over the chunks.
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
