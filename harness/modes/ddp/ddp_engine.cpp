// ddp_engine.cpp — see ddp_engine.h: one row per engine.
#include "modes/ddp/ddp_engine.h"

#include "modes/ddp/bucketed_engine.h"
#include "modes/ddp/c10d_engine.h"
#include "modes/ddp/naive_engine.h"

namespace ddpbench::modes::ddp {
namespace {

// PyTorch's own constructor: verification, state broadcast, buckets, Reducer.
std::unique_ptr<DdpEngine> make_c10d_engine(torch::nn::Module& module, comm::Communicator& comm,
                                            const DdpOptions& options) {
  C10dEngineOptions o;
  o.limits = options.reducer.limits;
  o.comm_hook = options.reducer.comm_hook;
  o.find_unused_parameters = options.reducer.find_unused_parameters;
  o.gradient_as_bucket_view = options.gradient_as_bucket_view;
  o.static_graph = options.static_graph;
  o.broadcast_buffers = options.broadcast_buffers;
  o.initial_buckets = options.resume_buckets;
  o.bucket_fault = options.bucket_fault;
  return std::make_unique<C10dEngine>(module, comm, o);
}

}  // namespace

std::unique_ptr<DdpEngine> make_ddp_engine(torch::nn::Module& module,
                                           const std::vector<std::string>& names,
                                           const std::vector<at::Tensor>& params,
                                           comm::Communicator& comm, const DdpOptions& options) {
  switch (options.impl) {
    case DdpImpl::kBucketed:
      return std::make_unique<BucketedEngine>(module, names, params, comm, options);
    case DdpImpl::kNaive:
      return std::make_unique<NaiveEngine>(module, names, params, comm, options);
    case DdpImpl::kC10d:
      return make_c10d_engine(module, comm, options);
  }
  throw std::logic_error("make_ddp_engine: an engine without a row");
}

}  // namespace ddpbench::modes::ddp
