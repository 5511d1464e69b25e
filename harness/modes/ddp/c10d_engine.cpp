// c10d_engine.cpp — see c10d_engine.h. Each step below names the line of Python DDP it stands for
// (torch/nn/parallel/distributed.py, 1.13 and 2.11).
#include "modes/ddp/c10d_engine.h"

#include <fmt/format.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <torch/csrc/distributed/c10d/comm.hpp>
#include <torch/csrc/distributed/c10d/logger.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>

#include "comm/c10d_process_group.h"
#include "errors.h"
#include "modes/common/trained_parameters.h"

namespace ddpbench::modes::ddp {
namespace {

// DistributedDataParallel.broadcast_bucket_size.
constexpr size_t kBroadcastBucketBytes = size_t{250} * 1024 * 1024;

// default_hooks.bf16_compress_hook: cast the bucket to bfloat16, divide by the world size,
// allreduce, copy the sum back into the bucket. c10d has no built-in bf16 hook (ALLREDUCE and
// FP16_COMPRESS only), so this is Python's hook in C++ — the same operations in the same order.
// (CommHookInterface, not CppCommHookInterface: the latter's parseHookResult calls a function
// libtorch 1.13 does not export.)
class Bf16CompressHook : public c10d::CommHookInterface {
 public:
  explicit Bf16CompressHook(c10::intrusive_ptr<c10d::ProcessGroup> group)
      : state_(std::move(group)) {}

  at::Tensor parseHookResult(const c10::IValue& result) override { return result.toTensor(); }

  c10::intrusive_ptr<c10::ivalue::Future> runHook(c10d::GradBucket& bucket) override {
    at::Tensor compressed = bucket.getBufferRef().to(at::kBFloat16).div_(state_->getSize());
    std::vector<at::Tensor> tensors{compressed};
    auto fut = state_->allreduce(tensors)->getFuture();
    at::Tensor decompressed = bucket.getBufferRef();
    return fut->then(
        [decompressed](c10::ivalue::Future& done) {
          decompressed.copy_(done.value().toTensorVector()[0]);
          return c10::IValue(decompressed);
        },
        c10::TensorType::get());
  }

 private:
  c10::intrusive_ptr<c10d::ProcessGroup> state_;
};

// default_hooks.allreduce_hook (divide the bucket by the world size, allreduce it in place), the
// arithmetic of the Reducer's own reduction, with the bucket fault: while `skip` is set the last
// bucket is only divided, and nothing is sent for it.
class SkippableAllreduceHook : public c10d::CommHookInterface {
 public:
  SkippableAllreduceHook(c10::intrusive_ptr<c10d::ProcessGroup> group,
                         std::shared_ptr<std::atomic<bool>> skip)
      : group_(std::move(group)), skip_(std::move(skip)) {}

  at::Tensor parseHookResult(const c10::IValue& result) override { return result.toTensor(); }

  c10::intrusive_ptr<c10::ivalue::Future> runHook(c10d::GradBucket& bucket) override {
    at::Tensor tensor = bucket.getBufferRef();
    tensor.div_(group_->getSize());
    if (bucket.isLast() && skip_->load()) {
      auto done = c10::make_intrusive<c10::ivalue::Future>(c10::TensorType::get());
      done->markCompleted(c10::IValue(tensor));
      return done;
    }
    std::vector<at::Tensor> tensors{tensor};
    return group_->allreduce(tensors)->getFuture()->then(
        [tensor](c10::ivalue::Future& /*done*/) { return c10::IValue(tensor); },
        c10::TensorType::get());
  }

 private:
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  std::shared_ptr<std::atomic<bool>> skip_;
};

}  // namespace

struct C10dEngine::State {
  C10dEngineOptions options;
  c10::intrusive_ptr<c10d::ProcessGroup> group;
  torch::nn::Module* module = nullptr;
  std::vector<at::Tensor> params;
  std::shared_ptr<c10d::Reducer> reducer;
  // DDP's dist.Logger: the Reducer reports to it and (unchecked) needs one. Declared after the
  // Reducer so that it is destroyed first, as Python's DDP drops it.
  std::shared_ptr<c10d::Logger> logger;
  // DDP's require_forward_param_sync: the last forward was a synchronised training forward (or
  // none ran yet), so this one broadcasts the buffers.
  bool require_forward_param_sync = true;
  int64_t num_iterations = 0;        // synchronised training forwards (DDP.num_iterations)
  int64_t reduction_allreduces = 0;  // what the coming (or last) reduction issues
  // The bucket fault's switch, read by SkippableAllreduceHook (on the thread backward runs on).
  std::shared_ptr<std::atomic<bool>> skip_last_bucket = std::make_shared<std::atomic<bool>>(false);
};

namespace {

// DDP's _sync_module_states: rank 0's parameters, then its buffers, on every rank.
void sync_module_states(const c10::intrusive_ptr<c10d::ProcessGroup>& group,
                        torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> states;
  for (const auto& p : module.named_parameters()) states.push_back(p.value().detach());
  for (const auto& b : module.named_buffers()) states.push_back(b.value().detach());
  if (!states.empty()) c10d::broadcast_coalesced(group, states, kBroadcastBucketBytes, 0);
}

// DDP.register_comm_hook, or the Reducer's own allreduce of 1/W-scaled gradients.
void register_hook(c10d::Reducer& reducer, const c10::intrusive_ptr<c10d::ProcessGroup>& group,
                   CommHookKind kind) {
  switch (kind) {
    case CommHookKind::kAllreduce:
      break;
    case CommHookKind::kFp16Compress:
      // default_hooks.fp16_compress_hook, as c10d's built-in FP16_COMPRESS.
      reducer.register_builtin_comm_hook(c10d::BuiltinCommHookType::FP16_COMPRESS);
      break;
    case CommHookKind::kBf16Compress:
      reducer.register_comm_hook(std::make_unique<Bf16CompressHook>(group));
      break;
  }
}

}  // namespace

C10dEngine::C10dEngine(torch::nn::Module& module, comm::Communicator& comm,
                       C10dEngineOptions options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = options;
  s.module = &module;
  s.group = comm::c10d_process_group(comm);
  if (!s.group) {
    // resolve_run refuses this combination before any rank starts; reaching it is a bug.
    throw std::logic_error(fmt::format(
        "--ddp-impl c10d needs a communicator on a c10d process group, and --backend {} is not",
        comm.backend()));
  }
  // DDP's constructor: the parameters it reduces, and their names for the Reducer's messages.
  TrainedParameters trained = trained_parameters(module);
  s.params = std::move(trained.tensors);
  std::unordered_map<size_t, std::string> names;
  for (size_t i = 0; i < trained.names.size(); ++i) names[i] = trained.names[i];

  // _verify_param_shape_across_processes, then _sync_module_states.
  c10d::verify_params_across_processes(s.group, s.params, {});
  sync_module_states(s.group, module);

  // _ddp_init_helper: one bucket of everything for the first iteration unless unused parameters
  // are searched (the Reducer rebuilds the buckets in gradient-ready order after it); otherwise the
  // first bucket's limit, then the cap. The first bucket's limit is the linked version's rule
  // (first_bucket_limit: PyTorch 2.x drops the small first bucket when the cap was given; its
  // [cap] buckets as [cap, cap] do).
  const int64_t first_bucket_bytes_cap = first_bucket_limit(options.limits);
  const std::vector<size_t> limits =
      options.static_graph || !options.find_unused_parameters
          ? std::vector<size_t>{std::numeric_limits<size_t>::max()}
          : std::vector<size_t>{static_cast<size_t>(first_bucket_bytes_cap),
                                static_cast<size_t>(options.limits.bucket_cap_bytes)};
  const std::vector<bool> sparse(s.params.size(), false);
  auto assignment = c10d::compute_bucket_assignment_by_size(s.params, limits, sparse);
  std::vector<std::vector<size_t>> buckets = std::get<0>(assignment);
  std::reverse(buckets.begin(), buckets.end());
  if (!options.initial_buckets.empty()) {  // checked by DistributedModel: check_bucket_layout
    buckets.clear();
    for (const std::vector<int64_t>& b : options.initial_buckets) {
      buckets.emplace_back(b.begin(), b.end());
    }
  }
#if TORCH_VERSION_MAJOR >= 2
  s.reducer = std::make_shared<c10d::Reducer>(
      s.params, buckets, s.group, sparse, options.limits.bucket_cap_bytes,
      options.find_unused_parameters, options.gradient_as_bucket_view, names,
      first_bucket_bytes_cap, /*skip_all_reduce_unused_params=*/false,
      /*use_python_reducer=*/false, /*bucket_bytes_cap_list=*/std::vector<int64_t>{});
#else
  std::vector<size_t> per_bucket_limits = std::get<1>(assignment);
  std::reverse(per_bucket_limits.begin(), per_bucket_limits.end());
  // A resumed layout's limits: 1.13's Reducer only logs them.
  per_bucket_limits.resize(buckets.size(), static_cast<size_t>(options.limits.bucket_cap_bytes));
  s.reducer = std::make_shared<c10d::Reducer>(
      s.params, buckets, per_bucket_limits, s.group, sparse, options.limits.bucket_cap_bytes,
      options.find_unused_parameters, options.gradient_as_bucket_view, names,
      first_bucket_bytes_cap);
#endif
  if (options.bucket_fault) {
    s.reducer->register_comm_hook(
        std::make_unique<SkippableAllreduceHook>(s.group, s.skip_last_bucket));
  } else {
    register_hook(*s.reducer, s.group, options.comm_hook);
  }
  s.logger = std::make_shared<c10d::Logger>(s.reducer);
  s.reducer->set_logger(s.logger);
  s.logger->set_construction_data_and_log(module.name(), {}, -1, options.broadcast_buffers,
                                          /*has_sync_bn=*/false, options.static_graph);
  if (options.static_graph) {  // DDP._set_static_graph()
    s.reducer->set_static_graph();
    s.logger->set_static_graph();
  }
}

C10dEngine::~C10dEngine() = default;

void C10dEngine::broadcast(std::vector<at::Tensor>& tensors, int root) {
  if (tensors.empty()) return;
  torch::NoGradGuard no_grad;
  c10d::broadcast_coalesced(state_->group, tensors, kBroadcastBucketBytes, root);
}

void C10dEngine::sync_buffers_as_joined(bool /*sync*/, const BufferSync& buffers_broadcast) {
  State& s = *state_;
  s.reducer->rebuild_buckets();
  if (s.require_forward_param_sync && s.options.broadcast_buffers) {
    std::vector<at::Tensor> buffers = s.module->buffers();
    if (!buffers.empty()) buffers_broadcast(buffers);
  }
}

void C10dEngine::before_forward(bool sync, const BufferSync& buffers_broadcast) {
  State& s = *state_;
  if (torch::GradMode::is_enabled() && sync) {
    s.logger->set_runtime_stats_and_log();
    ++s.num_iterations;
    s.reducer->prepare_for_forward();
  }
  if (torch::GradMode::is_enabled()) s.reducer->rebuild_buckets();  // DDP._rebuild_buckets
  // _check_sync_bufs_pre_fwd: require_forward_param_sync and broadcast_buffers and buffers.
  if (s.require_forward_param_sync && s.options.broadcast_buffers) {
    std::vector<at::Tensor> buffers = s.module->buffers();
    if (!buffers.empty()) buffers_broadcast(buffers);
  }
}

void C10dEngine::after_forward(const at::Tensor& output, bool sync) {
  State& s = *state_;
  if (!(torch::GradMode::is_enabled() && sync)) {
    s.require_forward_param_sync = false;
    return;
  }
  s.require_forward_param_sync = true;
  // What the Reducer will allreduce in this backward: every bucket in place (rebuilt in
  // before_forward), and the used-parameter map where it is reduced: every iteration while
  // searching a dynamic graph for unused parameters, the first of a static graph
  // (Reducer::dynamic_graph_find_unused, static_graph_first_iteration, delay_all_reduce).
  const bool dynamic_search = s.options.find_unused_parameters && !s.options.static_graph;
  const bool static_first = s.options.static_graph && s.num_iterations == 1;
  s.reduction_allreduces = num_buckets() + (dynamic_search || static_first ? 1 : 0);
  if (s.options.find_unused_parameters && !s.options.static_graph) {
    s.reducer->prepare_for_backward({output});  // _find_tensors(output)
  } else {
    s.reducer->prepare_for_backward({});
  }
  if (s.options.static_graph && s.num_iterations == 1) {
    // _DDPSink.backward on a static graph's first iteration: the Reducer only learns which
    // parameters are used then, and reduces everything in one delayed allreduce queued to run
    // when backward ends. Without it the gradients of that iteration are never averaged.
    std::shared_ptr<c10d::Reducer> reducer = s.reducer;
    at::Tensor(output).register_hook([reducer](const at::Tensor& grad) {
      torch::autograd::Engine::get_default_engine().queue_callback(
          [reducer] { reducer->delay_all_reduce(); });
      return grad;
    });
  }
}

void C10dEngine::before_evaluation_forward(bool /*first*/) {
  before_forward(true, [this](std::vector<at::Tensor>& b) { broadcast(b, 0); });
}

void C10dEngine::after_evaluation_forward(const at::Tensor& output) { after_forward(output, true); }

void C10dEngine::reduce_as_joined(bool sync) {
  if (!sync) return;
  State& s = *state_;
  s.reducer->rebuild_buckets();
  std::vector<c10d::GradBucket> buckets = s.reducer->get_grad_buckets(/*return_zero_tensors=*/true);
  s.reduction_allreduces = static_cast<int64_t>(buckets.size());  // one comm hook per bucket
  std::vector<c10::intrusive_ptr<c10::ivalue::Future>> works;
  for (c10d::GradBucket& bucket : buckets) works.push_back(s.reducer->run_comm_hook(bucket));
  torch::NoGradGuard no_grad;
  for (size_t b = 0; b < buckets.size(); ++b) {
    works[b]->wait();
    // The hooks reduce the bucket's buffer in place (allreduce; fp16/bf16 decompress into it).
    const std::vector<at::Tensor> grads = buckets[b].getGradients();
    const std::vector<at::Tensor>& params = buckets[b].getParameters();
    for (size_t i = 0; i < params.size(); ++i) {
      at::Tensor p = params[i];
      p.mutable_grad() = grads[i].clone();
    }
  }
  s.require_forward_param_sync = true;  // main_hook: should_sync_backwards
}

void C10dEngine::set_gradient_tap(GradientTap tap) {
  State& s = *state_;
  for (size_t i = 0; i < s.params.size(); ++i) {
    s.params[i].register_hook([tap, index = static_cast<int64_t>(i)](const at::Tensor& grad) {
      at::Tensor changed = grad.clone();
      tap(index, changed);
      return changed;
    });
  }
}

void C10dEngine::skip_last_reduction(bool skip) { state_->skip_last_bucket->store(skip); }

std::optional<int64_t> C10dEngine::allreduces_per_reduction() const {
  return state_->reduction_allreduces;
}

int64_t C10dEngine::num_buckets() const {
  return static_cast<int64_t>(state_->reducer->get_grad_buckets(false).size());
}

void C10dEngine::settle_buckets() {
  if (torch::GradMode::is_enabled()) state_->reducer->rebuild_buckets();
}

std::vector<std::vector<int64_t>> C10dEngine::bucket_layout() const {
  const State& s = *state_;
  std::vector<std::vector<int64_t>> layout;
  for (auto& bucket : s.reducer->get_grad_buckets(false)) {
    std::vector<int64_t> indices;
    for (const at::Tensor& p : bucket.getParameters()) {
      const auto it = std::find_if(s.params.begin(), s.params.end(),
                                   [&p](const at::Tensor& q) { return q.is_same(p); });
      if (it == s.params.end()) {
        throw std::logic_error(
            "c10d engine: a bucket holds a parameter the engine does not reduce");
      }
      indices.push_back(it - s.params.begin());
    }
    layout.push_back(std::move(indices));
  }
  return layout;
}

int64_t C10dEngine::bytes_last_step() const {
  int64_t bytes = 0;
  for (auto b : state_->reducer->get_grad_buckets(false)) {
    const at::Tensor& buffer = b.getBufferRef();
    bytes += buffer.numel() * buffer.element_size();
  }
  return state_->options.comm_hook == CommHookKind::kAllreduce ? bytes : bytes / 2;
}

}  // namespace ddpbench::modes::ddp
