// script_scenario.cpp — see script_scenario.h.
#include "scenarios/script_scenario.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "errors.h"
#include "scenarios/content_hash.h"
#include "scenarios/models/script_model.h"

namespace ddpbench::scenarios {

ScenarioSpec with_script_model(ScenarioSpec base, const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream content;
  if (!in || !(content << in.rdbuf())) {
    throw InputError(fmt::format("--model {}: cannot read it ({}); pass a TorchScript file saved "
                                 "with torch.jit.script(model).save(FILE)",
                                 file, std::strerror(errno)));
  }
  auto bytes = std::make_shared<const std::string>(content.str());
  models::ScriptModel(bytes, file);  // refuses, before anything starts, what cannot train
  base.model_name = "TorchScript sha256:" + sha256_hex(*bytes);
  base.build_model = [bytes, file](int64_t /*seed: the weights are the file's*/) {
    return torch::nn::AnyModule(models::ScriptModel(bytes, file));
  };
  // The torch DDP oracle rebuilds built-in models by name; a file is not among them yet.
  base.torch_oracle_model.clear();
  return base;
}

}  // namespace ddpbench::scenarios
