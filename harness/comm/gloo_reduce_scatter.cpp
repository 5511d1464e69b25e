// gloo_reduce_scatter.cpp — see gloo_reduce_scatter.h.
#include "comm/gloo_reduce_scatter.h"

#include <ATen/ATen.h>

#include <utility>
#include <vector>

namespace ddpbench::comm {
namespace {

// Holds the posted sends and receives. The sum lands in the first term: this rank's own block (a
// view of the input) on rank 0, rank 0's received block elsewhere, so adding in rank order needs
// no copy.
class PairwiseScatterWork : public Work {
 public:
  PairwiseScatterWork(std::vector<c10::intrusive_ptr<c10d::Work>> posted,
                      std::vector<at::Tensor> terms)
      : posted_(std::move(posted)), terms_(std::move(terms)) {}

  void wait() override {
    if (done_) return;
    for (auto& w : posted_) w->wait();
    // Rank order: ((t0 + t1) + t2) ..., the same on every run; with two ranks it is the one sum
    // the allreduce it replaces did, so stage 2 stays bitwise with ddp there.
    for (size_t r = 1; r < terms_.size(); ++r) terms_.front().add_(terms_[r]);
    posted_.clear();
    terms_.clear();
    done_ = true;
  }

 private:
  std::vector<c10::intrusive_ptr<c10d::Work>> posted_;
  std::vector<at::Tensor> terms_;  // every rank's block, in rank order; the sum goes to the first
  bool done_ = false;
};

}  // namespace

ScatterWork gloo_reduce_scatter_async(c10d::ProcessGroupGloo& group, int rank, int world_size,
                                      const at::Tensor& input, int tag) {
  const at::Tensor flat = input.view(-1);
  const int64_t block = flat.numel() / world_size;
  std::vector<c10::intrusive_ptr<c10d::Work>> posted;
  std::vector<at::Tensor> terms;
  for (int peer = 0; peer < world_size; ++peer) {
    if (peer == rank) {
      terms.push_back(flat.narrow(0, rank * block, block));
      continue;
    }
    std::vector<at::Tensor> in{at::empty({block}, flat.options())};
    terms.push_back(in.front());
    posted.push_back(group.recv(in, peer, tag));
    std::vector<at::Tensor> out{flat.narrow(0, peer * block, block)};
    posted.push_back(group.send(out, peer, tag));
  }
  at::Tensor sum = terms.front();
  return {std::make_shared<PairwiseScatterWork>(std::move(posted), std::move(terms)),
          std::move(sum)};
}

}  // namespace ddpbench::comm
