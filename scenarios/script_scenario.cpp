// script_scenario.cpp — see script_scenario.h.
#include "scenarios/script_scenario.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "errors.h"
#include "input_file.h"
#include "scenarios/content_hash.h"
#include "scenarios/models/script_model.h"

namespace ddpbench::scenarios {

ScenarioSpec with_script_model(ScenarioSpec base, const std::string& file) {
  auto bytes = std::make_shared<const std::string>(read_input_file(
      file, "--model", "pass a TorchScript file saved with torch.jit.script(model).save(FILE)"));
  // Refuses, before anything starts, what cannot train.
  const models::ScriptModel probe(bytes, file);
  base.model_name = "TorchScript sha256:" + sha256_hex(*bytes);
  // Every model of the run reuses the probe's analysis of forward (models/script_model.h).
  // The seed is unused: the weights are the file's.
  base.build_model = [bytes, file, facts = probe->facts()](int64_t /*seed*/) {
    return torch::nn::AnyModule(models::ScriptModel(bytes, file, false, &facts));
  };
  // The torch DDP oracle loads the same file (reference/torch_ddp_oracle.py).
  base.torch_oracle_model = "torchscript";
  base.model_file = file;
  base.tied_parameters.clear();  // the file's model, not the base's
  base.model_notes = models::describe_script_model(probe->facts(), probe->optimizes_graph());
  return base;
}

}  // namespace ddpbench::scenarios
