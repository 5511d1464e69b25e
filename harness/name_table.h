// name_table.h — an enum's spellings as one constexpr table of (value, name) rows, and the three
// questions every flag or key with choices asks of it: a value's name, the value a name stands
// for, every name in order (a flag's choices). Torch-free and header-only, so the CLI's plain
// request headers and the scenario keys read the same tables.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ddpbench {

template <typename E, size_t N>
using NameTable = std::array<std::pair<E, std::string_view>, N>;

// `value`'s name in `table` ("?" for none). The names are string literals, so data() is a C string.
template <typename E, size_t N>
constexpr std::string_view name_in(const NameTable<E, N>& table, E value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "?";
}

// The value `name` stands for, or none.
template <typename E, size_t N>
std::optional<E> value_named(const NameTable<E, N>& table, std::string_view name) {
  for (const auto& [v, n] : table) {
    if (n == name) return v;
  }
  return std::nullopt;
}

// The value `name` stands for, where the caller already checked that it is one of the names (a
// CLI choice): anything else is a bug, thrown as std::invalid_argument naming `what` (a flag).
template <typename E, size_t N>
E value_of_choice(const NameTable<E, N>& table, const std::string& name, const char* what) {
  const std::optional<E> value = value_named(table, name);
  if (!value) {
    throw std::invalid_argument(std::string(what) + " " + name + ": not one of its choices");
  }
  return *value;
}

// Every name in `table`, in its order.
template <typename E, size_t N>
std::vector<std::string> names_in(const NameTable<E, N>& table) {
  std::vector<std::string> out;
  for (const auto& [v, name] : table) out.emplace_back(name);
  return out;
}

}  // namespace ddpbench
