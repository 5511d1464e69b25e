// naive_engine.h — `--ddp-impl naive`: one blocking allreduce per gradient after backward, in
// registration order; slow and obviously correct, kept as a comparison point for the bucketed
// Reducer and PyTorch's.
#pragma once

#include "modes/ddp/own_engine.h"

namespace ddpbench::modes::ddp {

class NaiveEngine : public OwnEngine {
 public:
  NaiveEngine(torch::nn::Module& module, const std::vector<std::string>& names,
              const std::vector<at::Tensor>& params, comm::Communicator& comm,
              const DdpOptions& options);

  void reduce(bool sync) override;
  void reduce_as_joined(bool sync) override;
  void set_sync(bool /*sync*/) override {}
  void set_gradient_tap(GradientTap tap) override { tap_ = std::move(tap); }
  void skip_last_reduction(bool skip) override { skip_last_ = skip; }
  std::optional<int64_t> allreduces_per_reduction() const override { return allreduces_; }
  int64_t num_buckets() const override { return 0; }
  int64_t bytes_last_step() const override { return bytes_; }
  void settle_buckets() override {}
  // None: the order is the parameters'.
  std::vector<std::vector<int64_t>> bucket_layout() const override { return {}; }

 private:
  // The allreduces of one reduction; `joined`: this rank ran no backward this step and
  // contributes zeros (reduce_as_joined).
  void reduce_each(bool joined);
  // Per parameter: whether some rank computed its gradient (with find_unused_parameters, one
  // allreduce of the ranks' flags; without it, all true).
  std::vector<bool> used_anywhere(bool joined);

  std::vector<std::string> names_;
  std::vector<at::Tensor> params_;
  GradientTap tap_;
  bool skip_last_ = false;
  int64_t bytes_ = 0;
  int64_t allreduces_ = 0;  // what the last reduction had to issue (allreduces_per_reduction)
};

}  // namespace ddpbench::modes::ddp
