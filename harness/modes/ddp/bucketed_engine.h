// bucketed_engine.h — `--ddp-impl bucketed` (the default): ddpbench's own Reducer, which
// allreduces each gradient bucket as soon as backward has filled it, overlapping communication
// with the rest of backward as PyTorch's DDP does (reducer.h).
#pragma once

#include "modes/ddp/own_engine.h"

namespace ddpbench::modes::ddp {

class BucketedEngine : public OwnEngine {
 public:
  BucketedEngine(torch::nn::Module& module, const std::vector<std::string>& names,
                 const std::vector<at::Tensor>& params, comm::Communicator& comm,
                 const DdpOptions& options);

  // The Reducer finalizes whether or not this step syncs: inside no_sync it only accumulates.
  void reduce(bool /*sync*/) override { reducer_.finalize(); }
  void reduce_as_joined(bool /*sync*/) override { reducer_.reduce_as_joined(); }
  void set_sync(bool sync) override { reducer_.set_sync(sync); }
  void set_gradient_tap(GradientTap tap) override { reducer_.set_gradient_tap(std::move(tap)); }
  void skip_last_reduction(bool skip) override { reducer_.skip_last_bucket(skip); }
  std::optional<int64_t> allreduces_per_reduction() const override {
    return reducer_.allreduces_per_reduction();
  }
  int64_t num_buckets() const override { return static_cast<int64_t>(reducer_.buckets().size()); }
  int64_t bytes_last_step() const override { return reducer_.bytes_last_step(); }
  void settle_buckets() override;
  std::vector<std::vector<int64_t>> bucket_layout() const override { return reducer_.buckets(); }
  const Reducer* reducer() const override { return &reducer_; }

 private:
  void prepare_forward() override;

  Reducer reducer_;
};

}  // namespace ddpbench::modes::ddp
