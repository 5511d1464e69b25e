// state_broadcast.cpp — see state_broadcast.h.
#include "modes/ranks/state_broadcast.h"

#include <torch/torch.h>

#include "comm/broadcast_coalesced.h"

namespace ddpbench::modes::ranks {

void broadcast_parameter_states(comm::Communicator& comm, int root,
                                const std::vector<at::Tensor>& params,
                                std::vector<scenarios::ParameterState>& states,
                                std::vector<at::Tensor> leading) {
  const std::vector<std::string>& names = scenarios::state_names();
  states.resize(params.size());
  at::Tensor present = at::zeros({static_cast<int64_t>(params.size())}, at::kLong);
  int64_t* bits = present.data_ptr<int64_t>();
  for (size_t i = 0; i < params.size(); ++i) {
    for (size_t n = 0; n < names.size(); ++n) {
      if (states[i].count(names[n]) != 0) bits[i] |= int64_t{1} << n;
    }
  }
  comm.broadcast({present}, root);
  std::vector<at::Tensor> all = std::move(leading);
  for (size_t i = 0; i < params.size(); ++i) {
    auto& state = states[i];
    for (size_t n = 0; n < names.size(); ++n) {
      if ((bits[i] & (int64_t{1} << n)) == 0) {
        state.erase(names[n]);
        continue;
      }
      auto it = state.find(names[n]);
      if (it == state.end()) {
        it = state.emplace(names[n], scenarios::empty_state_entry(names[n], params[i])).first;
      }
      all.push_back(it->second);
    }
  }
  if (!all.empty()) comm::broadcast_values(comm, all, root);
}

}  // namespace ddpbench::modes::ranks
