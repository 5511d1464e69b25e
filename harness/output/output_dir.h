// output_dir.h — the only place ddpbench writes result files. All files of a run are staged as
// temporaries and renamed into place together at commit(), so a failed or interrupted run leaves
// nothing half-written. A --out that does not exist is made only at commit, with every missing
// folder above it (a/b/c/d), so that even a run killed outright leaves none of them
// (Note [An --out that does not exist yet], output_dir.cpp).
//
// A run owns its folder: it refuses a non-empty folder that is not an earlier ddpbench run, locks
// the folder for its whole life (a second run into it is refused, not mixed in), and at commit
// removes the earlier run's files that it did not write again, so a report never sits beside
// another run's state files. Every command that writes a folder owns it the same way, but
// replaces only what the same command wrote there (Note [A command replaces only its own
// results]). `report` adds its renderings to the report's own folder (kAddFiles) and owns any
// other --out as a run does, but never one holding results (Note [Rendering never destroys
// results]). The path is normalised first ("out/", "a/../b").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "launch/signal_cleanup.h"
#include "output/folder_manifest.h"

namespace ddpbench::output {

enum class OutputPolicy { kOwnFolder, kAddFiles };

class OutputDir {
 public:
  // Proves `path` writable (or, when missing, that it can be made) and takes its lock. Throws
  // InputError otherwise, and (kOwnFolder) when `path` holds what another command than
  // `command` ("run", "scale", "diff", "history", "comm", "report", "project") wrote.
  explicit OutputDir(std::string path, OutputPolicy policy = OutputPolicy::kOwnFolder,
                     std::string command = "run");
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
  // Drops every file staged so far: a failed run commits its failure.json alone.
  void discard_staged();
  const std::string& path() const { return path_; }

  // The file listing what the run that owns a folder wrote (so the next run can replace them),
  // after a first line "# ddpbench COMMAND" naming the command that wrote them (folder_manifest.h).
  static constexpr const char* kManifest = kManifestFile;

 private:
  struct Staged {
    std::string name;
    std::string temp;
    launch::TrackedResource tracked;
  };
  void check_owned_by_ddpbench() const;
  void check_written_by_this_command() const;
  void plan_new_folder();
  // Where staged files go: path_, or its place inside the hidden folder of a new --out.
  std::string staging_folder();

  std::string path_;
  OutputPolicy policy_;
  std::string command_;
  // A missing --out: the outermost missing folder, and path_'s place below it ("." when equal).
  std::string new_root_;
  std::string inside_root_;
  // The hidden folder standing in for new_root_ until commit ("" until the first stage()).
  std::string staging_root_;
  launch::TrackedResource staging_tracked_;
  int lock_fd_ = -1;
  bool committed_ = false;
  std::vector<Staged> staged_;
};

}  // namespace ddpbench::output
