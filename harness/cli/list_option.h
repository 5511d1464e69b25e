// list_option.h — the one parser of comma-separated list flags (--gpus 1,2,4, --modes single,ddp,
// --devices 8,64, --collectives allreduce,allgather). CLI11's own ->delimiter(',') drops empty
// elements without a word (`scale --gpus 1,,2` ran 1 and 2); here an empty element is refused,
// and every element passes the flag's validator before it is converted.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace ddpbench::cli {

// Adds `name` (e.g. "--gpus") filling `target` from one or more comma-separated words; what
// `target` holds beforehand is the default, kept when the flag is absent. `element` checks each
// element (default: any).
template <class T>
CLI::Option* add_list_option(CLI::App& cmd, const std::string& name, std::vector<T>& target,
                             const std::string& help, CLI::Validator element = CLI::Validator()) {
  const std::string flag = name.substr(0, name.find(','));
  CLI::Option* option = cmd.add_option(
      name,
      [&target, element, flag](const CLI::results_t& words) {
        target.clear();
        for (const std::string& word : words) {
          size_t at = 0;
          while (true) {
            const size_t comma = std::min(word.find(',', at), word.size());
            std::string item = word.substr(at, comma - at);
            if (item.empty()) {
              throw CLI::ValidationError(
                  flag, fmt::format("'{}' has an empty element: separate the values by single "
                                    "commas, none at either end",
                                    word));
            }
            const std::string error = element(item);
            if (!error.empty()) throw CLI::ValidationError(flag, error);
            T value{};
            if (!CLI::detail::lexical_cast(item, value)) {
              throw CLI::ValidationError(
                  flag, fmt::format("'{}' is not a {}", item, CLI::detail::type_name<T>()));
            }
            target.push_back(std::move(value));
            if (comma == word.size()) break;
            at = comma + 1;
          }
        }
        return true;
      },
      help, false, [&target] { return fmt::format("{}", fmt::join(target, ",")); });
  option->type_name(CLI::detail::type_name<T>());
  option->expected(CLI::detail::expected_max_vector_size);
  return option;
}

// Every option of `app` and its subcommands that takes a value refuses an empty one: `--config ''`
// ran the default scenario and `list --yaml ''` printed the table, because an empty string is
// how a request says "not given". `may_be_empty` names the exceptions, where empty is a choice.
inline void refuse_empty_values(CLI::App& app, const std::vector<std::string>& may_be_empty) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_expected_min() == 0) continue;  // a flag
    const std::string name = option->get_name();
    if (std::find(may_be_empty.begin(), may_be_empty.end(), name) != may_be_empty.end()) continue;
    option->check(CLI::Validator(
        [](std::string& value) -> std::string {
          if (!value.empty()) return {};
          return "the value is empty: give one, or leave the flag out for its default";
        },
        ""));
  }
  for (CLI::App* sub : app.get_subcommands(std::function<bool(CLI::App*)>())) {
    refuse_empty_values(*sub, may_be_empty);
  }
}

}  // namespace ddpbench::cli
