// host_staging.cpp — see host_staging.h.
#include "comm/host_staging.h"

#include <ATen/ATen.h>

#include <utility>
#include <vector>

namespace ddpbench::comm {
namespace {

at::Tensor on_host(const at::Tensor& t) { return t.device().is_cpu() ? t : t.to(at::kCPU); }

// The inner work, then the host result copied into the device tensor.
class StagedWork : public Work {
 public:
  StagedWork(std::shared_ptr<Work> inner, at::Tensor host, at::Tensor device)
      : inner_(std::move(inner)), host_(std::move(host)), device_(std::move(device)) {}
  void wait() override {
    inner_->wait();
    if (!device_.is_same(host_)) device_.copy_(host_);
  }

 private:
  std::shared_ptr<Work> inner_;
  at::Tensor host_;
  at::Tensor device_;
};

class HostStaging : public Communicator {
 public:
  explicit HostStaging(std::unique_ptr<Communicator> inner) : inner_(std::move(inner)) {}

  int rank() const override { return inner_->rank(); }
  int world_size() const override { return inner_->world_size(); }
  std::string backend() const override { return inner_->backend(); }

  std::shared_ptr<Work> allreduce_sum(at::Tensor tensor) override {
    at::Tensor host = on_host(tensor);
    return std::make_shared<StagedWork>(inner_->allreduce_sum(host), host, std::move(tensor));
  }

  void broadcast(std::vector<at::Tensor> tensors, int root) override {
    std::vector<at::Tensor> host;
    for (const auto& t : tensors) host.push_back(on_host(t));
    inner_->broadcast(host, root);
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (!tensors[i].is_same(host[i])) tensors[i].copy_(host[i]);
    }
  }

  std::vector<at::Tensor> allgather(const at::Tensor& tensor) override {
    std::vector<at::Tensor> out = inner_->allgather(on_host(tensor));
    if (!tensor.device().is_cpu()) {
      for (auto& t : out) t = t.to(tensor.device());
    }
    return out;
  }

  at::Tensor reduce_scatter_sum(const at::Tensor& input) override {
    at::Tensor out = inner_->reduce_scatter_sum(on_host(input));
    return input.device().is_cpu() ? out : out.to(input.device());
  }

  void barrier() override { inner_->barrier(); }
  int64_t collectives_issued() const override { return inner_->collectives_issued(); }

 private:
  std::unique_ptr<Communicator> inner_;
};

}  // namespace

std::unique_ptr<Communicator> with_host_staging(std::unique_ptr<Communicator> inner) {
  return std::make_unique<HostStaging>(std::move(inner));
}

}  // namespace ddpbench::comm
