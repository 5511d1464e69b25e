// input_file.h — reads a file the user named with a flag (--model, --data, --resume), refusing in
// one line what is not a readable, non-empty regular file: missing, a directory, unreadable
// (with the reason of the call that failed, not a stale errno) or empty. Each reader used to open
// it its own way, and a directory reached libstdc++'s "basic_filebuf::underflow" (exit 3) or an
// empty file reported the errno of an earlier call.
#pragma once

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "errors.h"
#include "quoted_input.h"

namespace ddpbench {

// The bytes of `path` (a std::string or std::vector<char>), named in errors as `flag 'path'`;
// `fix` says what to pass instead.
template <typename Bytes = std::string>
Bytes read_input_file(const std::string& path, std::string_view flag, std::string_view fix) {
  const auto refuse = [&](const std::string& why) {
    return InputError(fmt::format("{} {}: {}; {}", flag, quoted_input(path), why, fix));
  };
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    throw refuse("cannot read it (no such file)");
  }
  if (ec) throw refuse(fmt::format("cannot read it ({})", ec.message()));
  if (std::filesystem::is_directory(status)) throw refuse("it is a directory, not a file");
  if (!std::filesystem::is_regular_file(status)) throw refuse("it is not a regular file");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw refuse(fmt::format("cannot read it ({})", std::strerror(errno)));
  Bytes bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw refuse("reading it failed");
  if (bytes.empty()) throw refuse("it is empty");
  return bytes;
}

}  // namespace ddpbench
