// training_fault_refusals_test.cpp — the fault table drives what `--inject-fault` is refused for,
// in both directions: every kind is accepted in a run that has one of its modes and everything it
// needs, and refused, naming the fix, for a run without its modes and for each need unmet.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "errors.h"
#include "modes/common/fault_table.h"
#include "scenarios/registry.h"
#include "training/fault_detection.h"
#include "training/fault_refusals.h"

namespace ddpbench::training {
namespace {

using modes::FaultRow;
using modes::ModeKind;

// A run of linear_mse at 2 ranks with single and every mode the row goes into, and every need it
// has met.
RunSetup run_for(const FaultRow& row) {
  RunSetup s;
  auto spec =
      std::make_shared<scenarios::ScenarioSpec>(scenarios::builtin_registry().get("linear_mse"));
  if (row.needs & modes::kNeedsFp16Amp) spec->amp = scenarios::AmpKind::kFp16;
  if (row.needs & modes::kNeedsNoDecayGroup) {  // Linear's bias steps without weight decay
    spec->optimizer.weight_decay = 0.1;
    spec->optimizer.no_decay = {"1d"};
  }
  if (row.needs & modes::kNeedsSchedule) {  // a cosine over steps 0-3: every step's rate differs
    spec->optimizer.schedule.kind = scenarios::ScheduleKind::kWarmupCosine;
    spec->optimizer.schedule.decay_steps = 3;
  }
  if (row.needs & modes::kNeedsTiedParameter) spec->tied_parameters = {"weight"};
  s.spec = spec;
  s.world_size = 2;
  s.steps = 3;
  s.check_steps = 3;
  if (row.needs & modes::kNeedsPerfPhase) s.perf_steps = 3;
  s.modes = {ModeKind::kSingle};
  for (ModeKind m : {ModeKind::kDp, ModeKind::kDdp, ModeKind::kZero}) {
    if (row.modes & modes::mode_bit(m)) s.modes.push_back(m);
  }
  if (row.needs & modes::kNeedsAccumulation) s.accumulation_steps = 2;
  if (row.needs & modes::kNeedsSyncBn) s.sync_bn = true;
  if (row.needs & modes::kNeedsLockstep) s.lockstep = true;
  if (row.needs & modes::kNeedsReplicas) {  // HSDP: 2 replicas of a 2-way shard
    s.world_size = 4;
    s.zero_stage = 2;
    s.shard_group = 2;
  }
  s.ddp.broadcast_buffers = true;
  modes::FaultSpec f;
  f.kind = row.kind;
  f.rank = 1;
  f.step = 1;
  f.eps = 0.5;  // far above every gradient tolerance: the grad fault is detectable
  s.fault = f;
  return s;
}

std::string refusal(const RunSetup& s) {
  try {
    check_fault(s);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(FaultRefusals, EveryKindIsTakenWhereItsRowSaysAndRefusedElsewhere) {
  for (const FaultRow& row : modes::fault_rows()) {
    const RunSetup ok = run_for(row);
    EXPECT_EQ(refusal(ok), "") << row.name;

    RunSetup without_modes = ok;
    without_modes.modes = {ModeKind::kSingle};
    EXPECT_NE(refusal(without_modes).find(std::string("--inject-fault ") + row.name + " needs the"),
              std::string::npos)
        << row.name << ": " << refusal(without_modes);

    RunSetup beyond = ok;
    beyond.fault->rank = ok.world_size;
    EXPECT_NE(refusal(beyond).find(fmt::format("outside a world of {} ranks", ok.world_size)),
              std::string::npos)
        << row.name;
  }
}

TEST(FaultRefusals, EachNeedUnmetIsRefusedNamingTheFix) {
  struct Need {
    modes::FaultNeed need;
    void (*unmeet)(RunSetup&);
    const char* fix;
  };
  const Need needs[] = {
      {modes::kNeedsFp16Amp,
       [](RunSetup& s) {
         auto spec = std::make_shared<scenarios::ScenarioSpec>(*s.spec);
         spec->amp = scenarios::AmpKind::kOff;
         s.spec = spec;
       },
       "add --amp fp16"},
      {modes::kNeedsAccumulation, [](RunSetup& s) { s.accumulation_steps = 1; },
       "--accumulation-steps 2 or more"},
      {modes::kNeedsSyncBn, [](RunSetup& s) { s.sync_bn = false; }, "add --sync-bn"},
      {modes::kNeedsLockstep, [](RunSetup& s) { s.lockstep = false; }, "--comparison lockstep"},
      {modes::kNeedsBufferBroadcast, [](RunSetup& s) { s.ddp.broadcast_buffers = false; },
       "drop one of them"},
      {modes::kNeedsRankAboveZero, [](RunSetup& s) { s.fault->rank = 0; }, "pick rank=1"},
      {modes::kNeedsNoDecayGroup,
       [](RunSetup& s) {
         auto spec = std::make_shared<scenarios::ScenarioSpec>(*s.spec);
         spec->optimizer.no_decay = {"no_such_name"};
         s.spec = spec;
       },
       "has no such group: set OPTIM.WEIGHT_DECAY above 0 and OPTIM.NO_DECAY"},
      {modes::kNeedsSchedule,
       [](RunSetup& s) {
         auto spec = std::make_shared<scenarios::ScenarioSpec>(*s.spec);
         spec->optimizer.schedule.kind = scenarios::ScheduleKind::kStep;
         spec->optimizer.schedule.step_size = 5;  // the rate changes at step 5 only
         s.spec = spec;
       },
       "gives steps 1 and 2 the same rate"},
      {modes::kNeedsPerfPhase, [](RunSetup& s) { s.perf_steps = 0; }, "drop --check-only"},
      {modes::kNeedsTiedParameter,
       [](RunSetup& s) {
         auto spec = std::make_shared<scenarios::ScenarioSpec>(*s.spec);
         spec->tied_parameters.clear();
         s.spec = spec;
       },
       "ties none: use --scenario gpt_tiny"},
      {modes::kNeedsReplicas, [](RunSetup& s) { s.shard_group = 0; }, "--shard-group S"},
      // No single, and no ddp beside zero (Note [A fault needs a judge that can see it]).
      {modes::kNeedsReference,
       [](RunSetup& s) {
         std::vector<ModeKind> kept;
         for (ModeKind m : s.modes) {
           if (m != ModeKind::kSingle && m != ModeKind::kDdp) kept.push_back(m);
         }
         if (kept.empty()) kept.push_back(ModeKind::kDdp);
         s.modes = kept;
       },
       "add single to --modes"},
  };
  int refused = 0;
  for (const FaultRow& row : modes::fault_rows()) {
    for (const Need& n : needs) {
      if (!(row.needs & n.need)) continue;
      RunSetup s = run_for(row);
      n.unmeet(s);
      const std::string said = refusal(s);
      EXPECT_NE(said.find(n.fix), std::string::npos) << row.name << ": " << said;
      ++refused;
    }
  }
  EXPECT_GE(refused, 9) << "the table lost the needs this test knows";
}

// A fault that keeps the ranks consistent, in a run that compares them with no reference, is
// refused; with --trace (for diff) or --export-batches (for an outside oracle) it runs, and the
// run FAILs with injected_fault. A kind going into zero alone is seen by ddp beside it.
TEST(FaultRefusals, AFaultNoCheckOfTheRunCanSeeIsRefusedUnlessItIsRecordedForAnOutsideJudge) {
  RunSetup s = run_for(modes::fault_row(modes::FaultKind::kGrad));
  s.modes = {ModeKind::kDdp};
  EXPECT_NE(refusal(s).find("compares ddp with no reference"), std::string::npos) << refusal(s);
  s.trace = true;
  EXPECT_EQ(refusal(s), "");
  s.trace = false;
  s.export_batches = true;
  EXPECT_EQ(refusal(s), "");
  RunSetup owner = run_for(modes::fault_row(modes::FaultKind::kOwner));
  owner.modes = {ModeKind::kZero};
  EXPECT_NE(refusal(owner).find("(or ddp, which zero is judged against)"), std::string::npos)
      << refusal(owner);
  owner.modes = {ModeKind::kDdp, ModeKind::kZero};
  EXPECT_EQ(refusal(owner), "");
  // Rows seen by the ranks' own agreement need no reference.
  RunSetup gather = run_for(modes::fault_row(modes::FaultKind::kGather));
  gather.modes = {ModeKind::kZero};
  EXPECT_EQ(refusal(gather), "");
}

// A fault is named with the fields its row takes (the hostile run saw
// `divide:rank=0,step=1,eps=0.001` in diff's environment, for a kind that takes a step alone).
TEST(FaultRefusals, AFaultIsNamedWithItsRowsFieldsOnly) {
  modes::FaultSpec f;
  f.kind = modes::FaultKind::kDivide;
  f.step = 1;
  EXPECT_EQ(modes::fault_text(f), "divide:step=1");
  f.kind = modes::FaultKind::kGrad;
  f.rank = 1;
  f.tensor = "fc.weight";
  EXPECT_EQ(modes::fault_text(f), "grad:rank=1,step=1,eps=0.001,tensor=fc.weight");
  f.kind = modes::FaultKind::kSlow;
  f.ms = 2.5;
  EXPECT_EQ(modes::fault_text(f), "slow:rank=1,ms=2.5");
}

// A grad fault no check saw is blamed on what hid it: the rounding floor or items the run's
// precision cannot resolve, when the gradients check says it held some to them (the hostile run
// saw "an unused parameter" blamed there), else a gradient of that tensor that is zero.
TEST(FaultRefusals, AnUnseenGradFaultIsBlamedOnWhatHidIt) {
  const RunSetup s = run_for(modes::fault_row(modes::FaultKind::kGrad));
  reports::CheckRecord gradients;
  gradients.name = reports::Stage::kGradients;
  gradients.measure = reports::Measure::kNormalized;
  gradients.limit = 2e-5;
  gradients.items = 6;
  gradients.status = reports::CheckStatus::kPass;
  const auto plain = undetected_fault_check(s, ModeKind::kDdp, {gradients});
  ASSERT_TRUE(plain.has_value());
  EXPECT_NE(plain->detail.find("an unused parameter"), std::string::npos) << plain->detail;
  gradients.floored = 2;
  gradients.floor_tensor = "fc.weight";
  gradients.floor_step = 1;
  gradients.incomparable = 3;
  gradients.incomparable_tensor = "fc.bias";
  const auto floored = undetected_fault_check(s, ModeKind::kDdp, {gradients});
  ASSERT_TRUE(floored.has_value());
  EXPECT_NE(
      floored->detail.find("rounding floor measured on the model (closest: fc.weight step 1)"),
      std::string::npos)
      << floored->detail;
  EXPECT_NE(floored->detail.find("3 item(s) were not comparable"), std::string::npos)
      << floored->detail;
  EXPECT_EQ(floored->detail.find("unused parameter"), std::string::npos) << floored->detail;
}

TEST(FaultRefusals, AStepBeyondTheRunAndAPerfOnlyRunAreRefused) {
  RunSetup s = run_for(modes::fault_row(modes::FaultKind::kCrash));
  s.fault->step = 3;
  EXPECT_NE(refusal(s).find("beyond the run's 3 steps"), std::string::npos) << refusal(s);
  s.fault->step = 1;
  s.check_steps = 0;
  EXPECT_NE(refusal(s).find("drop --perf-only"), std::string::npos) << refusal(s);
  // A slowdown acts on the timed steps: a perf-only run (a --repeats repeat) takes it.
  RunSetup perf_only = run_for(modes::fault_row(modes::FaultKind::kSlow));
  perf_only.check_steps = 0;
  EXPECT_EQ(refusal(perf_only), "");
}

}  // namespace
}  // namespace ddpbench::training
