// gloo_reduce_scatter.cpp — see gloo_reduce_scatter.h.
#include "comm/gloo_reduce_scatter.h"

#include <ATen/ATen.h>

#include <utility>
#include <vector>

namespace ddpbench::comm {
namespace {

// Holds the posted sends and receives; wait() adds every rank's block in rank order into `sum`:
// in place into the first term (this rank's own block, a view of the input, on rank 0; rank 0's
// received block elsewhere), or into a tensor of its own when the input must stay as it was.
class PairwiseScatterWork : public Work {
 public:
  PairwiseScatterWork(std::vector<c10::intrusive_ptr<c10d::Work>> posted,
                      std::vector<at::Tensor> terms, at::Tensor sum)
      : posted_(std::move(posted)), terms_(std::move(terms)), sum_(std::move(sum)) {}

  void wait() override {
    if (done_) return;
    // c10d's send and receive works may be waited for once only: a second wait times out.
    for (auto& w : posted_) w->wait();
    // Rank order: ((t0 + t1) + t2) ..., the same on every run; with two ranks it is the one sum
    // the allreduce it replaces did, so stage 2 stays bitwise with ddp there.
    size_t next = 1;
    if (!sum_.is_same(terms_.front())) {
      if (terms_.size() == 1) {
        sum_.copy_(terms_.front());
      } else {
        at::add_out(sum_, terms_[0], terms_[1]);
        next = 2;
      }
    }
    for (; next < terms_.size(); ++next) sum_.add_(terms_[next]);
    posted_.clear();
    terms_.clear();
    done_ = true;
  }

 private:
  std::vector<c10::intrusive_ptr<c10d::Work>> posted_;
  std::vector<at::Tensor> terms_;  // every rank's block, in rank order
  at::Tensor sum_;
  bool done_ = false;
};

}  // namespace

ScatterWork gloo_reduce_scatter_async(c10d::ProcessGroupGloo& group, int rank, int world_size,
                                      const at::Tensor& input, int tag, bool in_place) {
  const at::Tensor flat = input.view(-1);
  const int64_t block = flat.numel() / world_size;
  if (block == 0) {  // nothing to send on any rank (every rank's input has the same size)
    return {std::make_shared<CompletedWork>(), at::empty({0}, flat.options())};
  }
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
  at::Tensor sum = in_place ? terms.front() : at::empty({block}, flat.options());
  auto work = std::make_shared<PairwiseScatterWork>(std::move(posted), std::move(terms), sum);
  return {std::move(work), std::move(sum)};
}

}  // namespace ddpbench::comm
