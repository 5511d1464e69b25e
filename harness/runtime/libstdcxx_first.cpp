// libstdcxx_first.cpp — makes libstdc++, not PyPI's libtorch.so, own std::filesystem in every
// process that links libtorch (ddpbench, its ranks, the test programs).
//
// PyPI's libtorch.so exports its own copies of std::filesystem (64 symbols in torch 2.11), without
// symbol versions, and its remove_all jumps to address 0. The dynamic linker binds each call to the
// first library in load order that defines the symbol, and an unversioned definition satisfies a
// GLIBCXX_3.4.26 reference. Linking -lstdc++ first puts libstdc++ ahead here (Debian, g++ 12), but on
// the GPU machine (Ubuntu 24.04, g++ 13, CMake 4.4) libtorch stayed ahead and every DDP run died in
// remove_all (cuda-gdb backtrace, 2026-11-26). Link order is the toolchain's to decide, so this
// checks the binding at start-up instead: when std::filesystem::remove_all is not libstdc++'s, the
// process runs itself again with libstdc++ in LD_PRELOAD, which comes before every NEEDED library.
// Children inherit LD_PRELOAD, so a rank or test child starts bound right and is not re-run.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

namespace {

using RemoveAll = std::uintmax_t (*)(const std::filesystem::path&, std::error_code&);
constexpr const char* kRemoveAllSymbol =
    "_ZNSt10filesystem10remove_allERKNS_7__cxx114pathERSt10error_code";

// The address libstdc++ itself defines remove_all at, and the file it was loaded from.
struct LibstdcxxDefinition {
  const void* address = nullptr;
  std::string file;
};

LibstdcxxDefinition libstdcxx_remove_all() {
  LibstdcxxDefinition found;
  void* handle = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return found;  // libstdc++ linked statically: nothing can shadow it
  found.address = dlsym(handle, kRemoveAllSymbol);
  Dl_info info{};
  if (found.address != nullptr && dladdr(found.address, &info) != 0 && info.dli_fname != nullptr) {
    found.file = info.dli_fname;
  }
  dlclose(handle);
  return found;
}

std::string library_of(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "(unknown)";
  return info.dli_fname;
}

// glibc calls .init_array functions with main's arguments; this runs before main, after every
// shared library's own initialisers.
__attribute__((constructor)) void put_libstdcxx_first(int /*argc*/, char** argv, char** /*envp*/) {
  const auto bound = reinterpret_cast<const void*>(
      static_cast<RemoveAll>(&std::filesystem::remove_all));
  const LibstdcxxDefinition own = libstdcxx_remove_all();
  if (own.address == nullptr || own.file.empty() || bound == own.address) return;

  const char* preload = std::getenv("LD_PRELOAD");
  const std::string current = preload == nullptr ? "" : preload;
  if (current.rfind(own.file, 0) == 0) {
    // Already re-run with libstdc++ first and still shadowed: say so instead of crashing later.
    std::fprintf(stderr,
                 "ddpbench: std::filesystem binds to %s, not to %s, even with LD_PRELOAD=%s; "
                 "rebuild ddpbench against this libtorch or link libstdc++ statically\n",
                 library_of(bound).c_str(), own.file.c_str(), current.c_str());
    _exit(2);
  }
  const std::string first = current.empty() ? own.file : own.file + ":" + current;
  setenv("LD_PRELOAD", first.c_str(), 1);
  execv("/proc/self/exe", argv);
  std::fprintf(stderr, "ddpbench: cannot re-run itself with LD_PRELOAD=%s (%s); run it with that "
                       "setting to keep libtorch's std::filesystem copies out\n",
               first.c_str(), std::strerror(errno));
  _exit(2);
}

}  // namespace

// Referenced by the link options of every libtorch user (cmake/ddpbench_layers.cmake), so the
// linker keeps this file's start-up check although nothing calls into it.
extern "C" void ddpbench_libstdcxx_first() {}
