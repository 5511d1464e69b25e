// output_dir.h — the only place ddpbench writes result files. All files of a run are staged as
// temporaries and renamed into place together at commit(), so a failed or interrupted run leaves
// nothing half-written (and removes a directory it created).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ddpbench::run {

class OutputDir {
 public:
  // Creates `path` if needed and proves it is writable. Throws InputError otherwise.
  explicit OutputDir(std::string path);
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  // Writes `bytes` to a temporary beside `name`. Throws InputError on I/O failure.
  void stage(const std::string& name, std::string_view bytes);
  // Renames every staged file into place.
  void commit();
  const std::string& path() const { return path_; }

 private:
  struct Staged {
    std::string temp;
    std::string final_path;
  };
  std::string path_;
  bool created_ = false;
  bool committed_ = false;
  std::vector<Staged> staged_;
};

}  // namespace ddpbench::run
