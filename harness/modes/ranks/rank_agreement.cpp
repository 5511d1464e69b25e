// rank_agreement.cpp — see rank_agreement.h.
#include "modes/ranks/rank_agreement.h"

#include <torch/torch.h>

#include <cstring>

#include "metrics/phase_times_tensor.h"

namespace ddpbench::modes::ranks {

uint64_t digest_bytes(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kCPU).contiguous();  // bytes are read on the host
  const auto* p = static_cast<const unsigned char*>(c.data_ptr());
  const size_t n = static_cast<size_t>(c.numel() * c.element_size());
  uint64_t h = 0xcbf29ce484222325ULL;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  for (; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

at::Tensor state_digests(const torch::nn::Module& module, std::vector<std::string>* names) {
  std::vector<int64_t> digests;
  for (const auto& p : module.named_parameters()) {
    digests.push_back(static_cast<int64_t>(digest_bytes(p.value())));
    if (names != nullptr) names->push_back(p.key());
  }
  return at::tensor(digests, at::kLong);
}

double global_mean_loss(comm::Communicator& comm, double local_loss, int64_t samples) {
  const auto n = static_cast<double>(samples);
  at::Tensor loss_sum = at::tensor({local_loss * n, n}, at::kDouble);
  comm::allreduce_sum_blocking(comm, loss_sum);
  return loss_sum[0].item<double>() / loss_sum[1].item<double>();
}

void note_disagreement(comm::Communicator& comm, const at::Tensor& digests,
                       const std::vector<std::string>& names, int64_t step,
                       RankDisagreement& first) {
  const std::vector<at::Tensor> all = comm.allgather(digests);
  for (int r = 1; r < comm.world_size() && first.step < 0; ++r) {
    const at::Tensor differs = all[static_cast<size_t>(r)].ne(all[0]);
    if (differs.any().item<bool>()) {
      first = {step, r, names[static_cast<size_t>(differs.nonzero()[0][0].item<int64_t>())]};
    }
  }
}

std::vector<std::vector<metrics::PhaseTimes>> every_rank_times(
    comm::Communicator& comm, const std::vector<metrics::PhaseTimes>& times) {
  // An empty list still joins the allgather (every rank must), as one row of zeros.
  const at::Tensor local =
      times.empty() ? at::zeros({1, 6}, at::kDouble) : metrics::phase_times_to_tensor(times);
  std::vector<std::vector<metrics::PhaseTimes>> by_rank;
  for (const at::Tensor& rows : comm.allgather(local)) {
    by_rank.push_back(metrics::phase_times_from_tensor(rows));
    by_rank.back().resize(times.size());
  }
  return by_rank;
}

std::vector<std::vector<at::Tensor>> every_rank_tensors(comm::Communicator& comm,
                                                        const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> flat;
  for (const at::Tensor& t : tensors) {
    if (t.defined()) flat.push_back(t.reshape({-1}).to(at::kDouble));
  }
  // An empty list still joins the allgather, as one zero.
  const at::Tensor local = flat.empty() ? at::zeros({1}, at::kDouble) : at::cat(flat);
  std::vector<std::vector<at::Tensor>> by_rank;
  for (const at::Tensor& all : comm.allgather(local)) {
    const at::Tensor host = all.cpu();
    std::vector<at::Tensor>& rank = by_rank.emplace_back(tensors.size());
    int64_t at = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (!tensors[i].defined()) continue;
      const int64_t n = tensors[i].numel();
      rank[i] = host.narrow(0, at, n).reshape(tensors[i].sizes()).to(tensors[i].scalar_type());
      at += n;
    }
  }
  return by_rank;
}

std::vector<metrics::PhaseTimes> slowest_of(
    const std::vector<std::vector<metrics::PhaseTimes>>& by_rank) {
  if (by_rank.empty()) return {};
  std::vector<metrics::PhaseTimes> worst = by_rank.front();
  for (const auto& rank : by_rank) {
    for (size_t s = 0; s < worst.size(); ++s) worst[s] = metrics::max_of(worst[s], rank[s]);
  }
  return worst;
}

}  // namespace ddpbench::modes::ranks
