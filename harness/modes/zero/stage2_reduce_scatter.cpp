// stage2_reduce_scatter.cpp — see stage2_reduce_scatter.h.
#include "modes/zero/stage2_reduce_scatter.h"

#include <torch/torch.h>

#include <algorithm>

#include "scenarios/optim/clip_grad_norm.h"

namespace ddpbench::modes::zero {

void Stage2ReduceScatter::reduce() {
  std::vector<at::Tensor>& params = shared_.params;
  const ZeroPartition& partition = shared_.partition;
  comm::Communicator& comm = shared_.mesh.shard();
  shared_.faults.apply_before_reduce(params);
  // Block r of the input holds shard rank r's parameters' gradients in its optimizer's order,
  // padded to the largest rank's elements; rank r keeps block r of the sum.
  const int world = comm.world_size();
  shared_.used.mark_gradients(params);
  const std::shared_ptr<comm::Work> used =
      shared_.used.start(shared_.comm, params.front().device());
  int64_t block = 1;
  for (const int64_t n : partition.rank_numel) block = std::max(block, n);
  at::Tensor input = at::zeros({world * block}, params.front().options());
  for (int r = 0; r < world; ++r) {
    int64_t offset = r * block;
    for (const int64_t i : partition.rank_params[static_cast<size_t>(r)]) {
      const at::Tensor& g = gradient_or_zeros(params[static_cast<size_t>(i)]);
      input.narrow(0, offset, g.numel()).copy_(g.reshape(-1));
      offset += g.numel();
    }
  }
  shared_.divide.apply_before(input);
  used->wait();
  shared_.used.finish();
  at::Tensor mine = comm.reduce_scatter_sum(input);
  const int64_t replica_bytes =
      finish_hsdp_reduction(shared_.mesh, shared_.divide, mine, shared_.hsdp_faults);
  int64_t offset = 0;
  for (const int64_t i : partition.rank_params[static_cast<size_t>(comm.rank())]) {
    at::Tensor& g = params[static_cast<size_t>(i)].mutable_grad();
    const int64_t n = params[static_cast<size_t>(i)].numel();
    if (!shared_.used.anywhere(static_cast<size_t>(i))) {
      g.reset();  // no rank used it: None, as single-device's
    } else {
      // A rank that used none of its own (a joined rank) receives them here.
      if (!g.defined()) g = at::empty_like(params[static_cast<size_t>(i)]);
      g.copy_(mine.narrow(0, offset, n).view_as(g));
    }
    offset += n;
  }
  // The others' gradients are theirs now: freed, as ZeRO-2 frees them.
  for (size_t i = 0; i < params.size(); ++i) {
    if (partition.owner[i] != comm.rank()) params[i].mutable_grad().reset();
  }
  shared_.bytes_per_step =
      input.numel() * static_cast<int64_t>(input.element_size()) + replica_bytes;
}

void Stage2ReduceScatter::clip(double max_norm) {
  torch::NoGradGuard no_grad;
  const std::vector<at::Tensor>& params = shared_.params;
  // Each parameter's norm from its owner, zeros elsewhere: the sum over ranks is exact.
  at::Tensor norms = at::zeros({static_cast<int64_t>(params.size())}, params.front().options());
  std::vector<at::Tensor> mine;
  for (const int64_t i :
       shared_.partition.rank_params[static_cast<size_t>(shared_.mesh.shard().rank())]) {
    const at::Tensor& g = params[static_cast<size_t>(i)].grad();
    if (!g.defined()) continue;
    norms[i].copy_(g.norm(2));
    mine.push_back(g);
  }
  comm::allreduce_sum_blocking(shared_.mesh.shard(), norms);
  const at::Tensor coefficient = scenarios::clip_coefficient(norms.norm(2), max_norm);
  for (at::Tensor& g : mine) g.mul_(coefficient);
}

std::vector<at::Tensor> Stage2ReduceScatter::recorded_gradients() {
  // Checked steps only, outside the timed phases.
  torch::NoGradGuard no_grad;
  const std::vector<at::Tensor>& params = shared_.params;
  std::vector<at::Tensor> grads(params.size());
  comm::Communicator& shard = shared_.mesh.shard();
  for (int owner = 0; owner < shard.world_size(); ++owner) {
    std::vector<at::Tensor> theirs;
    for (const int64_t i : shared_.partition.rank_params[static_cast<size_t>(owner)]) {
      if (!shared_.used.anywhere(static_cast<size_t>(i))) continue;  // None on every rank
      const at::Tensor& own = params[static_cast<size_t>(i)].grad();
      at::Tensor g = owner == shard.rank() && own.defined()
                         ? own.clone()
                         : at::zeros_like(params[static_cast<size_t>(i)]);
      grads[static_cast<size_t>(i)] = g;
      theirs.push_back(g);
    }
    if (!theirs.empty()) shard.broadcast(theirs, owner);
  }
  return grads;
}

}  // namespace ddpbench::modes::zero
