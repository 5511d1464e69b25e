// ddp_options.cpp — see ddp_options.h.
#include "modes/ddp/ddp_options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in ranges.h since fmt 11)

#include "errors.h"

namespace ddpbench::modes::ddp {

const char* ddp_impl_name(DdpImpl impl) {
  switch (impl) {
    case DdpImpl::kBucketed:
      return "bucketed";
    case DdpImpl::kNaive:
      return "naive";
    case DdpImpl::kC10d:
      return "c10d";
  }
  return "?";
}

DdpImpl parse_ddp_impl(const std::string& name) {
  std::vector<std::string> known;
  for (const DdpImpl impl : kDdpImpls) {
    if (name == ddp_impl_name(impl)) return impl;
    known.emplace_back(ddp_impl_name(impl));
  }
  throw InputError(
      fmt::format("unknown --ddp-impl '{}': known engines are {}", name, fmt::join(known, ", ")));
}

}  // namespace ddpbench::modes::ddp
