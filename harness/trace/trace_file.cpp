// trace_file.cpp — see trace_file.h.
#include "trace/trace_file.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

#include "errors.h"
#include "input_file.h"
#include "checkpoint/checkpoint_file.h"
#include "modes/common/model_state.h"
#include "quoted_input.h"
#include "scenarios/content_hash.h"

namespace ddpbench::trace {
namespace {

using Dict = c10::impl::GenericDict;
using List = c10::impl::GenericList;

constexpr const char* kFormat = "ddpbench-trace";
constexpr const char* kFix =
    "pass a trace.pt written by `ddpbench run --trace` (or its run folder)";

// Everything the digest covers, in a fixed order: a change to any field, name or tensor byte
// changes it.
std::string digest_of(const TraceFile& t) {
  const bool v1 = t.version == 1;
  std::string text = fmt::format("{} v{}\n", kFormat, t.version);
  for (const auto& [k, v] : t.environment) text += fmt::format("env {}={}\n", k, v);
  for (const auto& [k, v] : t.experiment) text += fmt::format("exp {}={}\n", k, v);
  text += t.values + "\n";
  for (const ModeEntries& m : t.modes) {
    text += v1 ? fmt::format("mode {} {}\n", m.mode, m.forward)
               : fmt::format("mode {} {} {} {}\n", m.mode, m.forward, m.divisor, m.wire_dtype);
    for (const modes::TraceEntry& e : m.entries) {
      const at::Tensor v = e.value.contiguous();
      text += fmt::format("{} {} {} {} {} {}{}\n", e.step, modes::trace_phase_name(e.phase),
                          e.tensor, e.fingerprint, c10::toString(v.scalar_type()),
                          fmt::join(v.sizes(), "x"), v1 ? "" : fmt::format(" r{}", e.rank));
      text.append(static_cast<const char*>(v.data_ptr()), v.nbytes());
    }
  }
  return scenarios::sha256_hex(text);
}

Dict fields_dict(const Fields& fields) {
  Dict d(c10::StringType::get(), c10::AnyType::get());
  for (const auto& [k, v] : fields) d.insert(k, v);
  return d;
}

Dict mode_dict(const ModeEntries& m) {
  Dict d(c10::StringType::get(), c10::AnyType::get());
  std::vector<int64_t> steps, ranks;
  std::vector<uint8_t> fingerprints;
  List phases(c10::AnyType::get()), tensors(c10::AnyType::get()), values(c10::AnyType::get());
  for (const modes::TraceEntry& e : m.entries) {
    steps.push_back(e.step);
    ranks.push_back(e.rank);
    fingerprints.push_back(e.fingerprint ? 1 : 0);
    phases.push_back(std::string(modes::trace_phase_name(e.phase)));
    tensors.push_back(e.tensor);
    values.push_back(e.value);
  }
  d.insert("mode", m.mode);
  d.insert("forward", m.forward);
  d.insert("divisor", m.divisor);
  d.insert("wire_dtype", m.wire_dtype);
  d.insert("step", at::tensor(steps, at::kLong));
  d.insert("rank", at::tensor(ranks, at::kLong));
  d.insert("phase", phases);
  d.insert("tensor", tensors);
  d.insert("fingerprint", at::tensor(fingerprints, at::kByte).to(at::kBool));
  d.insert("value", values);
  return d;
}

// What a malformed file is refused as; the file's name and the fix are added by the caller.
struct Malformed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const c10::IValue& at_key(const Dict& d, const char* key) {
  const auto it = d.find(key);
  if (it == d.end()) throw Malformed(fmt::format("it has no '{}'", key));
  return it->value();
}

std::string text_at(const Dict& d, const char* key) {
  const c10::IValue& v = at_key(d, key);
  if (!v.isString()) throw Malformed(fmt::format("its '{}' is not text", key));
  return v.toStringRef();
}

Fields fields_at(const Dict& d, const char* key) {
  const c10::IValue& v = at_key(d, key);
  if (!v.isGenericDict()) throw Malformed(fmt::format("its '{}' is not a dict", key));
  Fields out;
  for (const auto& item : v.toGenericDict()) {
    if (!item.key().isString() || !item.value().isString()) {
      throw Malformed(fmt::format("its '{}' holds something other than text", key));
    }
    out.emplace_back(item.key().toStringRef(), item.value().toStringRef());
  }
  return out;
}

// A value must be a dense host tensor whose record holds every byte it reads (the unpickler sized
// its storage by data.pkl's word, not by the record), before the digest reads it.
void check_stored(const checkpoint::TorchFile& file, const at::Tensor& t, const std::string& what) {
  if (t.layout() != at::kStrided || !t.device().is_cpu() || !t.is_contiguous() ||
      t.storage_offset() != 0 || t.nbytes() > t.storage().nbytes() ||
      file.record_bytes(t) < t.nbytes()) {
    throw Malformed(fmt::format("the record of {} does not hold its bytes", what));
  }
}

ModeEntries mode_at(const checkpoint::TorchFile& file, const c10::IValue& v, int64_t version) {
  if (!v.isGenericDict()) throw Malformed("a mode's record is not a dict");
  const Dict d = v.toGenericDict();
  ModeEntries m;
  m.mode = text_at(d, "mode");
  m.forward = text_at(d, "forward");
  at::Tensor rank;
  if (version >= 2) {
    const c10::IValue& divisor = at_key(d, "divisor");
    if (!divisor.isInt() || divisor.toInt() < 0) {
      throw Malformed(fmt::format("mode {}'s divisor is not a count", m.mode));
    }
    m.divisor = divisor.toInt();
    m.wire_dtype = text_at(d, "wire_dtype");
    const c10::IValue& ranks = at_key(d, "rank");
    if (!ranks.isTensor()) throw Malformed(fmt::format("mode {}'s ranks are not a tensor", m.mode));
    rank = ranks.toTensor().to(at::kLong).contiguous();
  }
  const c10::IValue& steps = at_key(d, "step");
  const c10::IValue& fingerprints = at_key(d, "fingerprint");
  const c10::IValue& phases = at_key(d, "phase");
  const c10::IValue& tensors = at_key(d, "tensor");
  const c10::IValue& values = at_key(d, "value");
  if (!steps.isTensor() || !fingerprints.isTensor() || !phases.isList() || !tensors.isList() ||
      !values.isList()) {
    throw Malformed(fmt::format("mode {}'s columns are not tensors and lists", m.mode));
  }
  const at::Tensor step = steps.toTensor().to(at::kLong).contiguous();
  const at::Tensor fingerprint = fingerprints.toTensor().to(at::kBool).contiguous();
  const auto& phase = phases.toListRef();
  const auto& tensor = tensors.toListRef();
  const auto& value = values.toListRef();
  const size_t n = value.size();
  if (!rank.defined()) rank = at::zeros({static_cast<int64_t>(n)}, at::kLong);
  if (step.numel() != static_cast<int64_t>(n) || fingerprint.numel() != static_cast<int64_t>(n) ||
      rank.numel() != static_cast<int64_t>(n) || phase.size() != n || tensor.size() != n) {
    throw Malformed(fmt::format("mode {}'s columns differ in length", m.mode));
  }
  for (size_t i = 0; i < n; ++i) {
    if (!phase[i].isString() || !tensor[i].isString() || !value[i].isTensor()) {
      throw Malformed(fmt::format("mode {}'s entry {} is malformed", m.mode, i));
    }
    modes::TraceEntry e;
    e.step = step[static_cast<int64_t>(i)].item<int64_t>();
    e.rank = rank[static_cast<int64_t>(i)].item<int64_t>();
    try {
      e.phase = modes::trace_phase_named(phase[i].toStringRef());
    } catch (const std::invalid_argument& x) {
      throw Malformed(x.what());
    }
    e.tensor = tensor[i].toStringRef();
    e.fingerprint = fingerprint[static_cast<int64_t>(i)].item<bool>();
    e.value = value[i].toTensor();
    check_stored(file, e.value, fmt::format("mode {}'s entry {}", m.mode, i));
    m.entries.push_back(std::move(e));
  }
  return m;
}

TraceFile trace_from(const checkpoint::TorchFile& file) {
  const c10::IValue& root = file.value;
  if (!root.isGenericDict()) throw Malformed("it is not a dict");
  const Dict d = root.toGenericDict();
  if (text_at(d, "format") != kFormat) throw Malformed("it is not a ddpbench trace");
  const c10::IValue& version = at_key(d, "version");
  if (!version.isInt() || version.toInt() < kOldestTraceVersion ||
      version.toInt() > kTraceVersion) {
    throw Malformed(
        fmt::format("it is a version {} trace, and this ddpbench reads versions {} to {}",
                    version.isInt() ? version.toInt() : -1, kOldestTraceVersion, kTraceVersion));
  }
  TraceFile t;
  t.version = version.toInt();
  t.environment = fields_at(d, "environment");
  t.experiment = fields_at(d, "experiment");
  t.values = text_at(d, "values");
  const c10::IValue& modes = at_key(d, "modes");
  if (!modes.isList()) throw Malformed("its 'modes' is not a list");
  for (const c10::IValue& m : modes.toListRef()) t.modes.push_back(mode_at(file, m, t.version));
  if (text_at(d, "digest") != digest_of(t)) {
    throw Malformed("its content does not match its digest (the file was edited or damaged)");
  }
  return t;
}

}  // namespace

std::vector<char> trace_bytes(const TraceFile& t) {
  Dict d(c10::StringType::get(), c10::AnyType::get());
  d.insert("format", std::string(kFormat));
  d.insert("version", kTraceVersion);
  d.insert("environment", fields_dict(t.environment));
  d.insert("experiment", fields_dict(t.experiment));
  d.insert("values", t.values);
  List modes(c10::AnyType::get());
  for (const ModeEntries& m : t.modes) modes.push_back(mode_dict(m));
  d.insert("modes", modes);
  d.insert("digest", digest_of(t));
  return modes::pickle_for_torch_load(d);
}

TraceFile read_trace(const std::string& path) {
  return read_trace(read_input_file<std::vector<char>>(path, "diff", kFix), path);
}

TraceFile read_trace(const std::vector<char>& bytes, const std::string& path) {
  // No record of the file can be larger than the file: tensors are stored, not compressed.
  const auto size = static_cast<uint64_t>(bytes.size());
  checkpoint::TorchFileRole role;
  role.flag = "diff";
  role.fix = kFix;
  role.one_tensor = "the file";
  role.all_tensors = "the file";
  const checkpoint::TorchFile file =
      checkpoint::read_torch_file(bytes, path, {size, size, size}, /*with_tensors=*/true, role);
  try {
    return trace_from(file);
  } catch (const Malformed& e) {
    throw InputError(fmt::format("diff {}: not a whole ddpbench trace: {}; {}", quoted_input(path),
                                 e.what(), kFix));
  }
}

}  // namespace ddpbench::trace
