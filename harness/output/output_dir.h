// output_dir.h — the only place ddpbench writes result files. All files of a run are staged as
// temporaries and renamed into place together at commit(), so a failed or interrupted run leaves
// nothing half-written, and removes every folder it created (a/b/c/d: each of them that did not
// exist before).
//
// A run owns its folder: it refuses a non-empty folder that is not an earlier ddpbench run, locks
// the folder for its whole life (a second run into it is refused, not mixed in), and at commit
// removes the earlier run's files that it did not write again, so a report never sits beside
// another run's state files. `report` adds its renderings to the report's own folder (kAddFiles)
// and owns any other --out as a run does, but never one holding results (Note [Rendering never
// destroys results]). The path is normalised first ("out/", "a/../b").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "launch/signal_cleanup.h"

namespace ddpbench::output {

enum class OutputPolicy { kOwnFolder, kAddFiles };

class OutputDir {
 public:
  // Creates `path` if needed, proves it writable and takes its lock. Throws InputError otherwise.
  explicit OutputDir(std::string path, OutputPolicy policy = OutputPolicy::kOwnFolder);
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  // Note [Rendering never destroys results]: `report` and `project` only render, so they may
  // replace what they write themselves and nothing else. Throws InputError (naming the file)
  // when commit() would remove or replace a file here that is not one of `renders`: a run's
  // report.json, state, checkpoint or batch files, another command's renderings. A report.json
  // byte-identical to `same_report` (the report being rendered) is no loss and passes.
  // kAddFiles removes nothing, so there only a different report.json in `renders` is refused.
  // Call before staging anything.
  void refuse_to_replace_results(const std::string& command,
                                 const std::vector<std::string>& renders,
                                 std::string_view same_report = {}) const;

  // Writes `bytes` to a temporary beside `name`. Throws InputError on I/O failure.
  void stage(const std::string& name, std::string_view bytes);
  // Renames every staged file into place (and, kOwnFolder, removes the earlier run's others).
  void commit();
  const std::string& path() const { return path_; }

  // The file listing what the run that owns a folder wrote (so the next run can replace them).
  static constexpr const char* kManifest = ".ddpbench-run";

 private:
  struct Staged {
    std::string name;
    std::string temp;
    launch::TrackedResource tracked;
  };
  void check_owned_by_ddpbench() const;
  void remove_created();

  std::string path_;
  OutputPolicy policy_;
  // The outermost folder this run made ("" when --out existed): removing it removes them all.
  std::string created_root_;
  launch::TrackedResource created_tracked_;
  int lock_fd_ = -1;
  bool committed_ = false;
  std::vector<Staged> staged_;
};

}  // namespace ddpbench::output
