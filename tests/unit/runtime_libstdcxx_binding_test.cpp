// runtime_libstdcxx_binding_test.cpp — the project's std::filesystem calls bind to libstdc++, not
// to the copies PyPI's libtorch.so exports (which crash: see cmake/ddpbench_layers.cmake).
#include <dlfcn.h>
#include <gtest/gtest.h>

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

}  // namespace
