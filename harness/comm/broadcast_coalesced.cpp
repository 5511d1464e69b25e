// broadcast_coalesced.cpp — see broadcast_coalesced.h.
#include "comm/broadcast_coalesced.h"

#include <ATen/ATen.h>

#include <map>
#include <utility>

namespace ddpbench::comm {

void broadcast_coalesced(Communicator& comm, const std::vector<at::Tensor>& tensors, int root) {
  // Grouped in first-seen order of (device, dtype): every rank builds the same groups.
  std::vector<std::vector<size_t>> groups;
  std::map<std::pair<std::string, int>, size_t> group_of;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto key =
        std::make_pair(tensors[i].device().str(), static_cast<int>(tensors[i].scalar_type()));
    auto [it, fresh] = group_of.emplace(key, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  for (const auto& group : groups) {
    if (group.size() == 1) {
      broadcast_values(comm, {tensors[group.front()]}, root);
      continue;
    }
    std::vector<at::Tensor> flat_parts;
    for (size_t i : group) flat_parts.push_back(tensors[i].reshape({-1}));
    at::Tensor flat = at::cat(flat_parts);
    comm.broadcast({flat}, root);
    int64_t offset = 0;
    for (size_t i : group) {
      const at::Tensor& t = tensors[i];
      t.copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
      offset += t.numel();
    }
  }
}

void broadcast_values(Communicator& comm, const std::vector<at::Tensor>& tensors, int root) {
  std::vector<at::Tensor> sent;
  sent.reserve(tensors.size());
  for (const at::Tensor& t : tensors) sent.push_back(t.is_contiguous() ? t : t.contiguous());
  comm.broadcast(sent, root);
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!sent[i].is_same(tensors[i])) tensors[i].copy_(sent[i]);
  }
}

}  // namespace ddpbench::comm
