// folder_manifest.h — what a ddpbench folder's manifest (.ddpbench-run) says: the command that
// wrote the folder and the files it wrote, so that the next command into the folder knows what it
// may replace (Note [A command replaces only its own results], output_dir.cpp); and which of a
// folder's files a user stands to lose first, for the refusals that name them.
#pragma once

#include <filesystem>
#include <set>
#include <string>

namespace ddpbench::output {

inline constexpr const char* kManifestFile = ".ddpbench-run";

struct Manifest {
  std::string command;  // its first line, "# ddpbench COMMAND"; "" when it predates that line
  std::set<std::string> names;
};

// `dir`'s manifest; without one (a folder from before manifests), ddpbench's file names in `dir`.
Manifest read_folder_manifest(const std::filesystem::path& dir);
void write_manifest(const std::filesystem::path& dir, const std::string& command,
                    const std::set<std::string>& names);

// The command that wrote the folder: the manifest's, or by its files where the manifest does not
// say ("" for a report and its renderings alone, which run, scale or report may have written).
std::string writer_of(const Manifest& m);

// A run's saved state: batches.pt, state_*.pt, checkpoint_*.
bool saved_state(const std::string& name);
// What a user stands to lose first, named first: 0 a report, 1 saved state or a trace, 2 the rest.
int loss_rank(const std::string& name);

}  // namespace ddpbench::output
