// scenario_config_fixture.h — the fixture of the ScenarioConfig suite, whose tests sit in two files
// (unit/scenarios_config_test.cpp, unit/scenarios_config_refusals_test.cpp): gtest runs a suite's
// tests only where they share one fixture class, so it is declared once, here. It writes scenario
// files into its temporary folder and configures scenarios from them and from the built-ins.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "errors.h"
#include "scenarios/registry.h"
#include "scenarios/scenario_config.h"
#include "support/temp_dir_test.h"

namespace ddpbench::scenarios {

class ScenarioConfig : public testing::TempDirTest {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = path(name);
    std::ofstream(p) << text;
    return p;
  }
  ScenarioSpec from_file(const std::string& file, std::vector<std::string> overrides = {}) {
    return configure_scenario(registry_, {"", file, std::move(overrides)});
  }
  // The InputError's message, or a failure when none is thrown.
  std::string error_of(const ScenarioSource& source) {
    try {
      configure_scenario(registry_, source);
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "no InputError for --config " << source.config;
    return "";
  }
  std::string file_error(const std::string& text, std::vector<std::string> overrides = {}) {
    return error_of({"", write("s.yaml", text), std::move(overrides)});
  }
  const ScenarioRegistry registry_ = builtin_registry();
};

}  // namespace ddpbench::scenarios
