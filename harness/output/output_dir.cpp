// output_dir.cpp — see output_dir.h.
#include "output/output_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>  // renameat2
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "errors.h"
#include "launch/stale_reclaim.h"
#include "output/folder_manifest.h"
#include "quoted_input.h"

namespace ddpbench::output {
namespace fs = std::filesystem;
namespace {

// A temporary left by a ddpbench run that was killed outright (SIGKILL cannot be cleaned up).
bool stale_temporary(const std::string& name) {
  return name.size() > 1 && name[0] == '.' && name.find(".tmp-") != std::string::npos;
}

// The files the run that owns `dir` wrote: from its manifest, else by ddpbench's file names.
std::set<std::string> earlier_run_files(const fs::path& dir) {
  return read_folder_manifest(dir).names;
}

// "newdir/", "./newdot/." and "newx/../newy" name the folders newdir, newdot and newy: without
// this, the trailing separator made an empty last component that create_directory refused ("it
// appeared meanwhile"), and newx/.. cannot be resolved while newx does not exist.
std::string normalised(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();
  return p.empty() ? std::string(".") : p.string();
}

}  // namespace

OutputDir::OutputDir(std::string path, OutputPolicy policy, std::string command)
    : path_(normalised(path)), policy_(policy), command_(std::move(command)) {
  std::error_code ec;
  if (fs::exists(path_, ec) && !fs::is_directory(path_, ec)) {
    throw InputError(fmt::format("--out {}: exists and is not a directory (choose another --out)",
                                 quoted_input(path_)));
  }
  if (!fs::exists(path_, ec)) {
    plan_new_folder();
    return;
  }
  if (access(path_.c_str(), W_OK | X_OK) != 0) {
    throw InputError(
        fmt::format("--out {}: directory is not writable ({}); choose a writable --out",
                    quoted_input(path_), std::strerror(errno)));
  }
  // Two runs into one folder would mix their files: the second is refused while the first lives.
  lock_fd_ = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock_fd_ < 0 || flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    if (lock_fd_ >= 0) ::close(lock_fd_);
    throw InputError(fmt::format(
        "--out {}: another ddpbench process is writing into this folder right now; choose "
        "another --out or wait for it to finish",
        quoted_input(path_)));
  }
  if (policy_ == OutputPolicy::kOwnFolder) {
    try {
      check_owned_by_ddpbench();
      check_written_by_this_command();
    } catch (...) {
      ::close(lock_fd_);  // no destructor runs for a constructor that throws
      throw;
    }
  }
}

// Note [An --out that does not exist yet]
// A run killed outright (SIGKILL) cannot remove what it made, so a new --out is not made until
// the results are: the constructor only checks that the folders can be made (the nearest existing
// ancestor is a writable folder), the first stage() makes the missing folders under a hidden
// name, <ancestor>/.<first missing>.tmp-<pid>, and commit() renames that into place in one step,
// refusing to replace anything that appeared there meanwhile (RENAME_NOREPLACE). A run killed
// before it stages anything (most of a run: results are staged at its end, batches.pt at the
// start of --export-batches) leaves nothing; one killed while staging leaves the hidden folder,
// which it holds locked, and the next run into the same --out removes it once its pid is gone
// (launch/stale_reclaim.h, Note [Reclaiming what a killed run left]).
void OutputDir::plan_new_folder() {
  std::error_code ec;
  const fs::path target = fs::absolute(path_, ec);
  fs::path root = target;
  while (root.has_parent_path() && root.parent_path() != root &&
         !fs::exists(root.parent_path(), ec)) {
    root = root.parent_path();
  }
  const fs::path parent = root.parent_path();
  if (!fs::is_directory(parent, ec)) {
    throw InputError(fmt::format(
        "--out {}: cannot create directory {} ({} is not a directory); choose a writable --out",
        quoted_input(path_), root.string(), parent.string()));
  }
  if (access(parent.c_str(), W_OK | X_OK) != 0) {
    throw InputError(
        fmt::format("--out {}: cannot create directory {} ({}); choose a writable --out",
                    quoted_input(path_), root.string(), std::strerror(errno)));
  }
  new_root_ = root.string();
  inside_root_ = target.lexically_relative(root).string();
  // Hidden folders of earlier runs into this --out that were killed while staging.
  const std::string mine = "." + root.filename().string() + ".tmp-";
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(mine, 0) != 0) continue;
    const pid_t owner = static_cast<pid_t>(std::atol(name.c_str() + mine.size()));
    if (launch::is_stale(e.path().string(), owner)) {
      std::error_code rm;
      fs::remove_all(e.path(), rm);
    }
  }
}

std::string OutputDir::staging_folder() {
  if (new_root_.empty()) return path_;
  if (staging_root_.empty()) {
    const fs::path root(new_root_);
    const std::string hidden =
        (root.parent_path() / fmt::format(".{}.tmp-{}", root.filename().string(), getpid()))
            .string();
    launch::SignalCleanup& cleanup = launch::SignalCleanup::process();
    const auto lock = cleanup.hold();
    std::error_code ec;
    const std::string inside = (fs::path(hidden) / inside_root_).lexically_normal().string();
    fs::create_directories(inside, ec);
    if (ec) {
      fs::remove_all(hidden, ec);
      throw InputError(
          fmt::format("--out {}: cannot create directory {} ({}); choose a writable "
                      "--out",
                      quoted_input(path_), hidden, ec.message()));
    }
    staging_root_ = hidden;
    staging_tracked_ = launch::TrackedResource(cleanup.track_path(staging_root_));
    lock_fd_ = ::open(staging_root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lock_fd_ >= 0) flock(lock_fd_, LOCK_EX);
  }
  return (fs::path(staging_root_) / inside_root_).lexically_normal().string();
}

void OutputDir::check_owned_by_ddpbench() const {
  const std::set<std::string> earlier = earlier_run_files(path_);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(path_, ec)) {
    const std::string name = e.path().filename().string();
    if (name == kManifest || stale_temporary(name) || earlier.count(name)) continue;
    throw InputError(fmt::format(
        "--out {} holds {}, which no ddpbench run wrote: a run replaces its folder's contents, "
        "so choose a new or empty folder (or an earlier run's)",
        quoted_input(path_), quoted_input(name)));
  }
}

// Note [A command replaces only its own results]
// A folder's manifest names the command that wrote it ("# ddpbench diff", its first line) and the
// files it wrote. A command owns its --out as a run does, replacing an earlier folder of its own
// (a run re-run into its folder, a diff re-diffed), but never what another command wrote there:
// `diff A B --out A` would otherwise have removed run A's report, state and trace (its own
// input) at commit and left diff.* alone, and `scale --out RUN` a run's state files. Such an
// --out is refused (exit 2) before anything is done, naming what it holds. Renderers are held
// tighter still (Note [Rendering never destroys results]). A folder from before the manifest
// named its command is judged by its files: state, a trace or failure.json are a run's; a report
// and its renderings alone may be a run's, a scale's or report's, and each of those may replace
// them, as before.
void OutputDir::check_written_by_this_command() const {
  const Manifest m = read_folder_manifest(path_);
  std::string owner = writer_of(m);
  if (owner.empty()) {
    // A report and its renderings from before the manifest named its command: run, scale or
    // report may have written them, and each may replace them.
    if (command_ == "run" || command_ == "scale" || command_ == "report") return;
    owner = "run";
  }
  if (owner == command_) return;
  std::error_code ec;
  std::vector<std::string> present;
  for (const auto& name : m.names) {
    if (fs::exists(fs::path(path_) / name, ec)) present.push_back(name);
  }
  if (present.empty()) return;  // listed, but gone since: nothing to lose
  std::stable_sort(present.begin(), present.end(), [](const std::string& a, const std::string& b) {
    return loss_rank(a) < loss_rank(b);
  });
  std::vector<std::string> named;
  for (size_t i = 0; i < present.size() && i < 3; ++i) named.push_back(quoted_input(present[i]));
  std::string list;
  for (const auto& n : named) list += (list.empty() ? "" : ", ") + n;
  if (present.size() > 3) list += fmt::format(" and {} more", present.size() - 3);
  throw InputError(fmt::format(
      "--out {} holds what `ddpbench {}` wrote ({}), which `{}` would remove: a command replaces "
      "only its own earlier results, never another's or its inputs; choose a new or empty --out",
      quoted_input(path_), owner, list, command_));
}

void OutputDir::refuse_to_replace_results(const std::string& command,
                                          const std::vector<std::string>& renders,
                                          std::string_view same_report) const {
  const std::set<std::string> writes(renders.begin(), renders.end());
  std::set<std::string> touched;  // what commit() would remove or overwrite
  if (policy_ == OutputPolicy::kOwnFolder) touched = earlier_run_files(path_);
  std::error_code ec;
  for (const auto& name : writes) {
    if (fs::exists(fs::path(path_) / name, ec)) touched.insert(name);
  }
  std::vector<std::string> lost;
  for (const auto& name : touched) {
    const fs::path file = fs::path(path_) / name;
    if (!fs::exists(file, ec)) continue;  // listed in the manifest, gone since
    const bool rewritten = writes.count(name) > 0;
    if (name == "report.json") {
      if (rewritten && !same_report.empty()) {
        std::ifstream in(file, std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
        if (bytes == same_report) continue;  // the very report being rendered
      }
    } else if (rewritten) {
      continue;  // a rendering this command writes again
    }
    lost.push_back(name);
  }
  if (lost.empty()) return;
  // A result is named before a rendering: that is what the user stands to lose.
  const std::string name = *std::min_element(
      lost.begin(), lost.end(),
      [](const std::string& a, const std::string& b) { return loss_rank(a) < loss_rank(b); });
  throw InputError(fmt::format(
      "{}: {} holds {} ({}), which rendering there would {}; `{}` only renders and never "
      "replaces results: choose a new or empty --out",
      command, quoted_input(path_), quoted_input(name),
      name == "report.json" ? "another run's report, not the one rendered"
      : saved_state(name)   ? "a run's saved state"
                            : "another run's output",
      writes.count(name) ? "overwrite" : "remove", command));
}

OutputDir::~OutputDir() {
  if (!committed_) {
    std::error_code ec;
    for (const auto& s : staged_) fs::remove(s.temp, ec);
    // The hidden folder holds nothing but what this run staged, in the folders it made for it.
    if (!staging_root_.empty()) fs::remove_all(staging_root_, ec);
  }
  staging_tracked_.reset();
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void OutputDir::stage(const std::string& name, std::string_view bytes) {
  launch::SignalCleanup& cleanup = launch::SignalCleanup::process();
  Staged s{
      name, (fs::path(staging_folder()) / fmt::format(".{}.tmp-{}", name, getpid())).string(), {}};
  std::ofstream out;
  {
    const auto lock = cleanup.hold();  // tracked before it exists, so a signal cannot miss it
    s.tracked = launch::TrackedResource(cleanup.track_path(s.temp));
    out.open(s.temp, std::ios::binary | std::ios::trunc);
  }
  const std::string temp = s.temp;
  staged_.push_back(std::move(s));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    throw InputError(fmt::format("{}: write failed ({}); check free space and permissions of --out",
                                 temp, std::strerror(errno)));
  }
}

void OutputDir::discard_staged() {
  std::error_code ec;
  for (const auto& s : staged_) fs::remove(s.temp, ec);
  staged_.clear();  // each one's tracking is released with it
}

void OutputDir::commit() {
  launch::SignalCleanup& cleanup = launch::SignalCleanup::process();
  const auto lock = cleanup.hold();  // a signal waits until the folder is whole
  const std::string folder = staging_folder();
  std::set<std::string> written;
  for (const auto& s : staged_) written.insert(s.name);
  std::set<std::string> replaced;
  if (policy_ == OutputPolicy::kOwnFolder) {
    replaced = earlier_run_files(folder);
    // The manifest is written first: if the renames below fail half-way, the next run still
    // knows every file that belongs to a ddpbench run.
    std::set<std::string> listed = written;
    listed.insert(replaced.begin(), replaced.end());
    write_manifest(folder, command_, listed);
  }
  for (const auto& s : staged_) {
    std::error_code ec;
    fs::rename(s.temp, fs::path(folder) / s.name, ec);
    if (ec) {
      throw InputError(fmt::format("{}: cannot move into place ({})",
                                   (fs::path(path_) / s.name).string(), ec.message()));
    }
  }
  if (policy_ == OutputPolicy::kOwnFolder) {
    std::error_code ec;
    for (const auto& name : replaced) {
      if (!written.count(name)) fs::remove(fs::path(folder) / name, ec);
    }
    // Temporaries of a run that was killed outright (we hold the folder's lock: none is live).
    for (const auto& e : fs::directory_iterator(folder, ec)) {
      if (stale_temporary(e.path().filename().string())) fs::remove(e.path(), ec);
    }
    write_manifest(folder, command_, written);
  }
  if (!staging_root_.empty()) {
    // One rename makes the whole new folder appear (Note [An --out that does not exist yet]).
    int moved =
        renameat2(AT_FDCWD, staging_root_.c_str(), AT_FDCWD, new_root_.c_str(), RENAME_NOREPLACE);
    if (moved != 0 && errno == EINVAL) {  // a file system without RENAME_NOREPLACE
      std::error_code ec;
      moved = fs::exists(new_root_, ec) ? (errno = EEXIST, -1)
                                        : std::rename(staging_root_.c_str(), new_root_.c_str());
    }
    if (moved != 0) {
      throw InputError(fmt::format(
          "--out {}: cannot move the results into place: {} ({}); the run's results are not "
          "written: choose another --out",
          quoted_input(path_), new_root_,
          errno == EEXIST ? "another process created it meanwhile" : std::strerror(errno)));
    }
    staging_root_.clear();
  }
  for (auto& s : staged_) s.tracked.reset();
  staging_tracked_.reset();
  committed_ = true;
  cleanup.results_committed();
}

}  // namespace ddpbench::output
