// comm_hook.cpp — see comm_hook.h. The plain allreduce sums buckets the Reducer has already scaled
// by 1/W (Note [PyTorch's reduction arithmetic] in reducer.h); the compression hooks divide by the
// world size in their own precision BEFORE the allreduce, as PyTorch's fp16/bf16 hooks do: it
// keeps 16-bit sums from overflowing, and rounds the way torch DDP does.
#include "modes/ddp/comm_hook.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in ranges.h since fmt 11)

#include <vector>

#include "errors.h"

namespace ddpbench::modes::ddp {
namespace {

class AllreduceReduction : public PendingReduction {
 public:
  AllreduceReduction(comm::Communicator& comm, at::Tensor bucket) : bucket_(std::move(bucket)) {
    work_ = comm.allreduce_sum(bucket_);
  }
  void finish() override { work_->wait(); }
  int64_t bytes() const override { return bucket_.numel() * bucket_.element_size(); }

 private:
  at::Tensor bucket_;
  std::shared_ptr<comm::Work> work_;
};

class CompressedReduction : public PendingReduction {
 public:
  CompressedReduction(comm::Communicator& comm, at::Tensor bucket, at::ScalarType wire)
      : bucket_(std::move(bucket)) {
    compressed_ = bucket_.to(wire).div_(comm.world_size());
    work_ = comm.allreduce_sum(compressed_);
  }
  void finish() override {
    work_->wait();
    bucket_.copy_(compressed_);  // decompress into the full-precision bucket
  }
  int64_t bytes() const override { return compressed_.numel() * compressed_.element_size(); }

 private:
  at::Tensor bucket_;
  at::Tensor compressed_;
  std::shared_ptr<comm::Work> work_;
};

}  // namespace

CommHookKind parse_comm_hook(const std::string& name) {
  std::vector<std::string> known;
  for (const CommHookKind kind : kCommHookKinds) {
    if (name == comm_hook_name(kind)) return kind;
    known.emplace_back(comm_hook_name(kind));
  }
  throw InputError(
      fmt::format("unknown --comm-hook '{}': known hooks are {}", name, fmt::join(known, ", ")));
}

const char* comm_hook_name(CommHookKind kind) {
  switch (kind) {
    case CommHookKind::kAllreduce:
      return "allreduce";
    case CommHookKind::kFp16Compress:
      return "fp16";
    case CommHookKind::kBf16Compress:
      return "bf16";
  }
  return "?";
}

std::unique_ptr<PendingReduction> launch_comm_hook(CommHookKind kind, comm::Communicator& comm,
                                                   at::Tensor bucket) {
  switch (kind) {
    case CommHookKind::kAllreduce:
      return std::make_unique<AllreduceReduction>(comm, std::move(bucket));
    case CommHookKind::kFp16Compress:
      return std::make_unique<CompressedReduction>(comm, std::move(bucket), at::kHalf);
    case CommHookKind::kBf16Compress:
      return std::make_unique<CompressedReduction>(comm, std::move(bucket), at::kBFloat16);
  }
  throw std::logic_error("unknown comm hook");
}

namespace {

class SkippedReduction : public PendingReduction {
 public:
  void finish() override {}
  int64_t bytes() const override { return 0; }
};

}  // namespace

std::unique_ptr<PendingReduction> skipped_reduction() {
  return std::make_unique<SkippedReduction>();
}

}  // namespace ddpbench::modes::ddp
