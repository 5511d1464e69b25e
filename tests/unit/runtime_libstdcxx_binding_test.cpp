// runtime_libstdcxx_binding_test.cpp — the project's std::filesystem calls bind to libstdc++, not
// to the copies PyPI's libtorch.so exports (which crash: see harness/runtime/libstdcxx_first.cpp),
// also when libtorch comes first in load order, as it did on the GPU machine.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

std::string library_of(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "(unknown)";
  return info.dli_fname;
}

TEST(LibstdcxxBinding, FilesystemCallsResolveToLibstdcxx) {
  using RemoveAll = std::uintmax_t (*)(const std::filesystem::path&);
  const auto remove_all = static_cast<RemoveAll>(&std::filesystem::remove_all);
  const std::string lib = library_of(reinterpret_cast<const void*>(remove_all));
  EXPECT_EQ(lib.find("libtorch"), std::string::npos)
      << "std::filesystem::remove_all resolves to " << lib;
  const auto dir = std::filesystem::temp_directory_path() / "ddpbench-binding-test";
  std::filesystem::create_directories(dir / "a" / "b");
  EXPECT_EQ(std::filesystem::remove_all(dir), 3u);
}

// The loaded libtorch.so's path, or "" (dl_iterate_phdr lists every loaded object).
std::string loaded_libtorch() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const std::string name = info->dlpi_name == nullptr ? "" : info->dlpi_name;
        if (name.size() >= 12 && name.compare(name.size() - 12, 12, "/libtorch.so") == 0) {
          *static_cast<std::string*>(out) = name;
          return 1;
        }
        return 0;
      },
      &found);
  return found;
}

// LD_PRELOAD puts libtorch.so ahead of libstdc++, the load order Ubuntu's toolchain produced on the
// GPU machine; the test above, run in such a child, passes only if the start-up check re-ran it
// with libstdc++ first (without the check, remove_all resolves into libtorch.so and the child
// fails).
TEST(LibstdcxxBinding, HoldsWhenLibtorchIsLoadedFirst) {
  const std::string libtorch = loaded_libtorch();
  if (libtorch.empty()) GTEST_SKIP() << "no libtorch.so loaded";
  void* handle = dlopen(libtorch.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  const bool exports =
      handle != nullptr &&
      dlsym(handle, "_ZNSt10filesystem10remove_allERKNS_7__cxx114pathE") != nullptr;
  if (handle != nullptr) dlclose(handle);
  if (!exports) GTEST_SKIP() << libtorch << " exports no std::filesystem copies (not PyPI's)";
  const std::string self = std::filesystem::read_symlink("/proc/self/exe");
  const std::string command =
      "LD_PRELOAD='" + libtorch + "' '" + self +
      "' --gtest_filter=LibstdcxxBinding.FilesystemCallsResolveToLibstdcxx >/dev/null 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

}  // namespace
