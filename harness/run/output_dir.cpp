// output_dir.cpp — see output_dir.h.
#include "run/output_dir.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "errors.h"

namespace ddpbench::run {
namespace fs = std::filesystem;

OutputDir::OutputDir(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  if (fs::exists(path_, ec) && !fs::is_directory(path_, ec)) {
    throw InputError(
        fmt::format("--out {}: exists and is not a directory (choose another --out)", path_));
  }
  if (!fs::exists(path_, ec)) {
    created_ = fs::create_directories(path_, ec);
    if (ec) {
      throw InputError(fmt::format(
          "--out {}: cannot create directory ({}); choose a writable --out", path_, ec.message()));
    }
  }
  if (access(path_.c_str(), W_OK | X_OK) != 0) {
    throw InputError(
        fmt::format("--out {}: directory is not writable ({}); choose a writable --out", path_,
                    std::strerror(errno)));
  }
}

OutputDir::~OutputDir() {
  if (committed_) return;
  std::error_code ec;
  for (const auto& s : staged_) fs::remove(s.temp, ec);
  if (created_ && fs::is_empty(path_, ec)) fs::remove(path_, ec);
}

void OutputDir::stage(const std::string& name, std::string_view bytes) {
  Staged s{(fs::path(path_) / fmt::format(".{}.tmp-{}", name, getpid())).string(),
           (fs::path(path_) / name).string()};
  staged_.push_back(s);
  std::ofstream out(s.temp, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    throw InputError(fmt::format("{}: write failed ({}); check free space and permissions of --out",
                                 s.temp, std::strerror(errno)));
  }
}

void OutputDir::commit() {
  for (const auto& s : staged_) {
    std::error_code ec;
    fs::rename(s.temp, s.final_path, ec);
    if (ec) {
      throw InputError(fmt::format("{}: cannot move into place ({})", s.final_path, ec.message()));
    }
  }
  committed_ = true;
}

}  // namespace ddpbench::run
