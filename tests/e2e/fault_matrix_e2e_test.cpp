// fault_matrix_e2e_test.cpp — every `--inject-fault` row against every subset of the modes the
// CLI accepts: each cell is refused before training (exit 2, naming what would see it) or its run
// FAILs (exit 1) or stops naming the rank (exit 3), never a PASS (Note [A fault needs a judge that
// can see it], training/fault_refusals.cpp; training/fault_detection.h). Two rows may pass and say
// why: `slow` changes only the timed steps (the checks pass, its straggler is named), and `inf`
// is an overflow every rank must skip as the reference does (its loss_scale check judges that).
//
// Which cells are refused is decided in-process, by the CLI's own flag parsing and the run's
// resolution, for all 15 mode subsets of every row. The accepted cells are run for real, one per
// class. Each mode a fault goes into is judged apart from the others (its own checks, and its own
// injected_fault guard), so a cell FAILs when any of its fault's modes does: the class is the row
// and one mode it goes into, and its smallest accepted cell (the mode alone where the row takes
// that: the cell without a reference, which the guard and the refusals were built for) stands for
// every cell holding that mode. A cell the binary refuses after resolution (a scenario the fault
// cannot act in) is a refusal too: exit 2, one line, nothing written.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <map>
#include <utility>

#include "cli/run_flags.h"
#include "errors.h"
#include "modes/common/fault_table.h"
#include "modes/common/mode_kind.h"
#include "run/default_comparison.h"
#include "run/resolve_run.h"
#include "scenarios/registry.h"
#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using modes::FaultKind;
using modes::FaultRow;
using modes::ModeKind;
using testing::ddpbench;
using testing::read_json;

constexpr ModeKind kModes[] = {ModeKind::kSingle, ModeKind::kDp, ModeKind::kDdp, ModeKind::kZero};

// The smallest run each row needs: linear_mse at world 2 for two steps, the fault at step 1, and
// what the row's needs ask for.
std::vector<std::string> row_args(const FaultRow& row, unsigned subset) {
  std::string scenario = "linear_mse";
  std::vector<std::string> extra;
  std::string world = "2";
  std::string steps = "2";
  if (row.needs & (modes::kNeedsSyncBn | modes::kNeedsBufferBroadcast) ||
      row.kind == FaultKind::kDpBuffers) {
    scenario = "tiny_resnet";  // buffers: BatchNorm's running statistics
    extra.insert(extra.end(), {"--batch-size", "4"});
  }
  if (row.kind == FaultKind::kEval) {
    scenario = "toy_cnn";  // a classifier, whose evaluation pass the fault corrupts
    extra.insert(extra.end(), {"--batch-size", "4", "--eval-size", "8"});
  }
  if (row.kind == FaultKind::kJoin) {
    scenario = "uneven_data";  // at world 3, rank 0 (7 samples a step) is out of batches at step 5
    world = "3";
    steps = "6";
  }
  if (row.kind == FaultKind::kSlow) steps = "8";  // enough timed steps to name the straggler
  if (row.needs & modes::kNeedsSyncBn) extra.push_back("--sync-bn");
  if (row.needs & modes::kNeedsAccumulation)
    extra.insert(extra.end(), {"--accumulation-steps", "2"});
  if (row.needs & modes::kNeedsFp16Amp) extra.insert(extra.end(), {"--amp", "fp16"});
  if (row.needs & modes::kNeedsLockstep) extra.insert(extra.end(), {"--comparison", "lockstep"});
  if (row.needs & modes::kNeedsReplicas) {
    world = "4";
    extra.insert(extra.end(), {"--zero-stage", "2", "--shard-group", "2"});
  }
  if (row.needs & modes::kNeedsPerfPhase) {
    extra.insert(extra.end(), {"--warmup", "0"});
  } else {
    extra.push_back("--check-only");
  }
  if (row.kind != FaultKind::kEval) extra.insert(extra.end(), {"--eval-size", "0"});
  if (row.kind == FaultKind::kHang) extra.insert(extra.end(), {"--timeout", "2"});
  std::vector<std::string> fields;
  if (row.fields & modes::kFaultRank) {
    fields.emplace_back(row.kind == FaultKind::kJoin ? "rank=0" : "rank=1");
  }
  if (row.fields & modes::kFaultStep) {
    fields.emplace_back(row.kind == FaultKind::kJoin ? "step=5" : "step=1");
  }
  if (row.fields & modes::kFaultEps) fields.emplace_back("eps=0.1");
  if (row.fields & modes::kFaultMs) fields.emplace_back("ms=5");
  std::string fault = std::string(row.name) + ":";
  for (size_t i = 0; i < fields.size(); ++i) fault += (i ? "," : "") + fields[i];
  std::string names;
  for (ModeKind m : kModes) {
    if (subset & modes::mode_bit(m))
      names += std::string(names.empty() ? "" : ",") + modes::mode_name(m);
  }
  std::vector<std::string> args = {"run", "--scenario",     scenario, "--modes",
                                   names, "--gpus",         world,    "--steps",
                                   steps, "--inject-fault", fault,    "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// "" when the CLI's parse and the run's resolution accept the cell, else the refusal's line.
std::string refusal(const std::vector<std::string>& args) {
  CLI::App app;
  requests::RunRequest request;
  cli::add_run_flags(*app.add_subcommand("run"), request);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
  try {
    app.parse(reversed);
    run::resolve_run(run::with_default_comparison(request, 0), scenarios::builtin_registry(),
                     std::nullopt);
  } catch (const InputError& e) {
    return e.what();
  } catch (const CLI::Error& e) {
    return e.what();
  }
  return "";
}

bool fp16_row(const FaultRow& row) { return (row.needs & modes::kNeedsFp16Amp) != 0; }

class FaultMatrix : public testing::TempDirTest {
 protected:
  // Walks every cell of the rows `take` selects; runs one accepted cell per class.
  void walk(bool (*take)(const FaultRow&)) {
    std::map<std::pair<FaultKind, ModeKind>, unsigned> classes;
    int refused = 0;
    for (const FaultRow& row : modes::fault_rows()) {
      if (!take(row)) continue;
      for (unsigned subset = 1; subset < 16; ++subset) {
        unsigned bits = 0;
        for (size_t i = 0; i < 4; ++i) bits |= subset & (1u << i) ? modes::mode_bit(kModes[i]) : 0;
        const std::vector<std::string> args = row_args(row, bits);
        const std::string why = refusal(args);
        if (!why.empty()) {
          ++refused;
          // One line that says what to do: the modes that would see it, or the option to change.
          EXPECT_EQ(why.find('\n'), std::string::npos) << why;
          if ((row.modes & bits) == 0 && why.find("--inject-fault") != std::string::npos) {
            EXPECT_NE(why.find("add "), std::string::npos) << row.name << ": " << why;
          }
          continue;
        }
        EXPECT_NE(row.modes & bits, 0u) << row.name << " accepted without one of its modes";
        for (ModeKind m : kModes) {
          if ((row.modes & bits & modes::mode_bit(m)) == 0) continue;
          const auto [it, fresh] = classes.emplace(std::make_pair(row.kind, m), bits);
          if (!fresh && __builtin_popcount(bits) < __builtin_popcount(it->second)) {
            it->second = bits;
          }
        }
      }
    }
    std::printf("fault matrix: %d cells refused, %zu classes of accepted cells to run\n", refused,
                classes.size());
    std::fflush(stdout);
    for (const auto& [key, bits] : classes) {
      // A hang ends at --timeout by construction, whatever judges the run: its cells are held
      // by DdpE2E.CrashHangAndNanStopTheRunNamingTheRank and the hang tests of
      // CollectiveDiagnosis and MpiFailures, and would cost this walk its timeout twice.
      if (key.first == FaultKind::kHang) continue;
      run_cell(modes::fault_row(key.first), bits);
    }
  }

  void run_cell(const FaultRow& row, unsigned bits) {
    const std::string out = path(fmt::format("{}_{}", row.name, bits));
    std::vector<std::string> args = row_args(row, bits);
    args.insert(args.end(), {"--out", out});
    // Flushed before the run, so a cell that never ends is named in ctest's log.
    std::printf("  %-8s --modes %-18s ", row.name, args[4].c_str());
    std::fflush(stdout);
    const auto r = ddpbench(args);
    std::string cell;
    for (const std::string& a : args) cell += a + " ";
    std::printf("exit %d\n", r.exit_code);
    std::fflush(stdout);
    if (r.exit_code == 2) {
      // Refused once the model and data were built: one line, nothing written.
      EXPECT_EQ(testing::count_lines(r.err), 1) << cell << "\n" << r.err;
      EXPECT_FALSE(fs::exists(out)) << cell;
      return;
    }
    switch (row.kind) {
      case FaultKind::kCrash:
      case FaultKind::kHang:
      case FaultKind::kNan:
        EXPECT_EQ(r.exit_code, 3) << cell << "\n" << r.out << r.err;
        EXPECT_NE(r.err.find("rank 1"), std::string::npos) << cell << "\n" << r.err;
        return;
      case FaultKind::kSlow: {
        // A timing fault: the checks pass, and the report names its straggler.
        ASSERT_EQ(r.exit_code, 0) << cell << "\n" << r.out << r.err;
        const auto report = read_json(out + "/report.json");
        bool named = false;
        for (const auto& m : report.at("results")) {
          const auto& s = m.at("throughput").at("straggler");
          named = named || s.at("summary").get<std::string>().find("rank 1") != std::string::npos;
        }
        EXPECT_TRUE(named) << cell << "\n" << report.dump(1);
        return;
      }
      case FaultKind::kSlowAll:
        // A slower build: the checks pass (how much slower it is, the gate's business).
        EXPECT_EQ(r.exit_code, 0) << cell << "\n" << r.out << r.err;
        return;
      case FaultKind::kInf: {
        // An overflow every rank must skip as the reference skips it.
        ASSERT_EQ(r.exit_code, 0) << cell << "\n" << r.out << r.err;
        const auto report = read_json(out + "/report.json");
        for (const auto& m : report.at("results")) {
          if (m.at("mode") == "single" || m.at("mode") == "dp") continue;
          EXPECT_EQ(testing::find_check(report, m.at("mode"), "loss_scale").at("status"), "pass");
          EXPECT_EQ(m.at("skipped_steps"), nlohmann::json::array({1})) << cell;
        }
        return;
      }
      default:
        break;
    }
    // Everything else is a wrong result: FAIL with a report that says so (the flight recorder
    // may stop a desync or a shape fault before any result: exit 3).
    if (r.exit_code == 3 && (row.kind == FaultKind::kDesync || row.kind == FaultKind::kShape)) {
      return;
    }
    ASSERT_EQ(r.exit_code, 1) << cell << "\n" << r.out << r.err;
    const auto report = read_json(out + "/report.json");
    EXPECT_EQ(report.at("verdict"), "fail") << cell;
  }
};

bool not_fp16(const FaultRow& row) { return !fp16_row(row); }

TEST_F(FaultMatrix, EveryCellIsRefusedOrFailsNeverPasses) { walk(not_fp16); }

// The GradScaler's rows need --amp fp16, whose CPU kernels libtorch 1.13 lacks (refused there,
// which the walk also holds); PyTorch 2.x runs them.
TEST_F(FaultMatrix, TheGradScalerRowsToo) { walk(fp16_row); }

}  // namespace
}  // namespace ddpbench
