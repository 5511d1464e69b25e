// html_reporter.cpp — see html_reporter.h. Sections are separate functions; all markup is
// escaped through xml_escape; the figures' sections are html_figures.h's.
#include "reports/run/html_reporter.h"
#include "reports/format/escape.h"

#include <fmt/format.h>

#include <algorithm>

#include "reports/run/divergence_text.h"
#include "reports/run/html_figures.h"
#include "reports/format/html_style.h"
#include "reports/run/junit_reporter.h"  // xml_escape
#include "reports/run/memory_rows.h"     // mib
#include "reports/run/verdict.h"

namespace ddpbench::reports {
namespace {

// The verdict's class.
const char* verdict_class(Verdict v) { return v == Verdict::kPass ? "pass" : "fail"; }

std::string verdict_section(const RunReport& r) {
  std::string s = fmt::format("<section id=\"verdict\" class=\"{}\"><h2>Verdict: {}</h2><ul>\n",
                              verdict_class(r.verdict), xml_escape(verdict_text(r)));
  for (const auto& m : r.results) {
    if (m.checks.empty()) continue;
    const CheckRecord* worst = nullptr;
    int failed = 0, divergent = 0, incomparable = 0, rounding = 0;
    for (const auto& c : m.checks) {
      failed += c.status == CheckStatus::kFail ? 1 : 0;
      rounding += c.status == CheckStatus::kRounding ? 1 : 0;
      divergent += c.status == CheckStatus::kExpectedDivergence ? 1 : 0;
      incomparable += c.status == CheckStatus::kNotComparable ? 1 : 0;
      if (c.status == CheckStatus::kFail && worst == nullptr) worst = &c;
    }
    std::string line = fmt::format("<b>{} (world {})</b>: {}", name_of(m.mode), m.world_size,
                                   failed > 0 ? "FAIL" : "pass");
    if (worst != nullptr) {
      line += fmt::format(" — {} differs most in <code>{}</code>{} (max |diff| {:.3e})",
                          name_of(worst->name), xml_escape(worst->tensor),
                          worst->step >= 0 ? fmt::format(" at step {}", worst->step) : "",
                          worst->max_abs_diff);
    }
    if (divergent > 0) line += fmt::format("; {} expected divergence(s)", divergent);
    if (rounding > 0) {
      line += fmt::format(
          "; {} check(s) float32 rounding (beyond their limits in float32, gone in the float64 "
          "re-run, which passes every check)",
          rounding);
    }
    if (incomparable > 0) {
      line +=
          fmt::format("; {} check(s) not comparable (the reference is not finite)", incomparable);
    }
    line += fmt::format("<br><span class=\"ref\">judged against {}</span>",
                        xml_escape(describe_reference(m.reference)));
    if (m.first_divergence.stage != Stage::kNone) {
      line += fmt::format("<br><b>first divergence</b>: {}",
                          xml_escape(describe_first_divergence(m.first_divergence)));
    }
    for (const auto& cause : m.reference.causes) {
      line += fmt::format("<br><span class=\"ref\">{}</span>", xml_escape(cause));
    }
    if (const std::string e = describe_evaluation(m.evaluation); !e.empty()) {
      line += fmt::format("<br><span class=\"ref\">evaluation {}</span>", xml_escape(e));
    }
    if (!m.reference.summary.empty()) {
      line += fmt::format("<br><span class=\"ref\">{}</span>", xml_escape(m.reference.summary));
    }
    if (!m.reference.floor.empty()) {
      line += fmt::format("<br><span class=\"ref\">rounding floor measured: {}</span>",
                          xml_escape(m.reference.floor));
    }
    s += "<li>" + line + "</li>\n";
  }
  return s + "</ul></section>\n";
}

// --amp: each mode's steps against float32 steps from the same state (a figure, not a verdict).
std::string amp_section(const RunReport& r) {
  std::string rows;
  for (const auto& m : r.results) {
    if (m.amp_vs_float32.summary.empty()) continue;
    rows += fmt::format("<li><b>{} (world {})</b>: {}</li>\n", name_of(m.mode), m.world_size,
                        xml_escape(m.amp_vs_float32.summary));
  }
  if (rows.empty()) return "";
  return "<section id=\"amp\"><h2>Mixed precision against float32</h2><ul>\n" + rows +
         "</ul></section>\n";
}

std::string sampler_section(const RunReport& r) {
  const SamplerRecord& s = r.config.sampler;
  std::string out = fmt::format(
      "<section id=\"sampler-partition\"><h2>Sampler partition (epoch "
      "0)</h2><p>DistributedSampler: "
      "{} samples over {} ranks, shuffle={}, drop_last={}: {} per rank, <span{}>{} "
      "duplicated by padding</span>, {} dropped per epoch. First {} indices per rank:</p>\n"
      "<div class=\"wide\"><table class=\"partition\">\n",
      s.dataset_size, s.num_replicas, s.shuffle, s.drop_last, s.num_samples,
      s.padded > 0 ? " class=\"pad\"" : "", s.padded, s.dropped, kPartitionPreview);
  for (size_t rank = 0; rank < s.preview.size(); ++rank) {
    out += fmt::format("<tr><th>rank {}</th>", rank);
    for (size_t j = 0; j < s.preview[rank].size(); ++j) {
      const bool pad = rank < s.preview_padding.size() && j < s.preview_padding[rank].size() &&
                       s.preview_padding[rank][j];
      out += fmt::format("<td{}>{}</td>", pad ? " class=\"pad\" title=\"padding duplicate\"" : "",
                         s.preview[rank][j]);
    }
    out += "</tr>\n";
  }
  return out + "</table></div></section>\n";
}

std::string checks_section(const RunReport& r) {
  bool any = false;
  for (const auto& m : r.results) any = any || !m.checks.empty();
  if (!any) {
    return "<section id=\"checks\"><h2>Checks</h2><p class=\"none\">No correctness checks "
           "ran (perf only).</p></section>\n";
  }
  std::string out =
      "<section id=\"checks\"><h2>Checks</h2><div class=\"wide\"><table><tr><th>mode</th>"
      "<th>check</th>"
      "<th>status</th><th>max |diff|</th><th>max rel</th><th>worst tensor</th>"
      "<th>step</th><th>detail</th></tr>\n";
  for (const auto& m : r.results) {
    for (const auto& c : m.checks) {
      out += fmt::format(
          "<tr class=\"{}\"><td>{} K={}</td><td>{}</td><td>{}</td><td class=\"num\">{:.3e}</td>"
          "<td class=\"num\">{:.3e}</td><td><code>{}</code></td><td class=\"num\">{}</td>"
          "<td>{}</td></tr>\n",
          name_of(c.status), name_of(m.mode), m.world_size, name_of(c.name), name_of(c.status),
          c.max_abs_diff, c.max_rel_diff, xml_escape(c.tensor),
          c.step >= 0 ? std::to_string(c.step) : "-",
          xml_escape(describe_counts(c) + (c.detail.empty() ? "" : "; " + c.detail)));
    }
  }
  return out + "</table></div></section>\n";
}

// "single 812.4 MiB; ddp 901.0 / 899.7 MiB (rank 0 / rank 1)"; "-" when no mode ran on CUDA.
std::string peak_memory_text(const RunReport& r) {
  std::string out;
  for (const auto& m : r.results) {
    if (m.peak_device_memory_bytes.empty()) continue;
    std::string values;
    for (const int64_t b : m.peak_device_memory_bytes) {
      values += fmt::format("{}{:.1f}", values.empty() ? "" : " / ", mib(b));
    }
    const size_t n = m.peak_device_memory_bytes.size();
    const char* per = m.mode == Mode::kDdp || m.mode == Mode::kZero ? "rank" : "device";
    out += fmt::format("{}{} {} MiB{}", out.empty() ? "" : "; ", name_of(m.mode), values,
                       n > 1 ? fmt::format(" ({} 0..{})", per, n - 1) : "");
  }
  return out.empty() ? "- (no mode ran on a CUDA device)" : out;
}

// "hostA (ranks 0-1), hostB (ranks 2-3)": where the DDP ranks ran, from the widest DDP result
// (a sweep's largest world size).
std::string hosts_text(const RunReport& r) {
  const ModeResult* widest = nullptr;
  for (const auto& m : r.results) {
    if (!m.hosts.empty() && (!widest || m.hosts.size() > widest->hosts.size())) widest = &m;
  }
  if (!widest) return r.context.host;
  const std::vector<std::string>& hosts = widest->hosts;
  std::string out;
  size_t first = 0;
  for (size_t i = 1; i <= hosts.size(); ++i) {
    if (i < hosts.size() && hosts[i] == hosts[first]) continue;
    out += fmt::format("{}{} (rank{} {})", out.empty() ? "" : ", ", hosts[first],
                       i - first > 1 ? "s" : "",
                       i - first > 1 ? fmt::format("{}-{}", first, i - 1) : std::to_string(first));
    first = i;
  }
  return out;
}

// Which engine averaged the ddp mode's gradients, and with what: c10d's Reducer is the linked
// libtorch's own code, so its version is part of the answer.
std::string ddp_engine_text(const RunReport& r) {
  const DdpSettings& d = r.config.ddp;
  if (std::find(r.config.modes.begin(), r.config.modes.end(), name_of(Mode::kDdp)) ==
      r.config.modes.end()) {
    return "-";
  }
  std::string engine = d.impl == "c10d"
                           ? "PyTorch's c10d Reducer (libtorch " + r.context.libtorch_version + ")"
                       : d.impl == "naive" ? "ddpbench's naive allreduce"
                                           : "ddpbench's bucketed reducer";
  engine += ", " + d.backend + ", comm hook " + d.comm_hook;
  if (d.find_unused_parameters) engine += ", find_unused_parameters";
  if (d.static_graph) engine += ", static_graph";
  if (d.gradient_as_bucket_view) engine += ", gradient_as_bucket_view";
  return engine;
}

// "ZeRO stage 2 over gloo" for a run with the zero mode, else "-"; under HSDP, its mesh.
std::string zero_text(const RunReport& r) {
  if (r.config.zero_stage == 0) return "-";
  if (r.config.shard_group > 0) {
    const int64_t k = r.config.world_size;
    return "HSDP, ZeRO stage " + std::to_string(r.config.zero_stage) + ": mesh (" +
           std::to_string(k / r.config.shard_group) + " replicas, " +
           std::to_string(r.config.shard_group) + "-way shard), " +
           (r.config.zero_stage == 3 ? "parameters, gradients and optimizer state"
                                     : "gradients and optimizer state") +
           " sharded within each shard group, averaged across the replicas, over " +
           r.config.ddp.backend;
  }
  if (r.config.zero_stage == 3) {
    return "ZeRO stage 3 (parameters, gradients and optimizer state sharded on dim 0) over " +
           r.config.ddp.backend;
  }
  return "ZeRO stage " + std::to_string(r.config.zero_stage) + " (optimizer state" +
         (r.config.zero_stage >= 2 ? " and gradients" : "") + " sharded) over " +
         r.config.ddp.backend;
}

std::string environment_section(const RunReport& r) {
  const RunContext& c = r.context;
  std::string argv;
  for (const auto& a : c.argv) argv += (argv.empty() ? "" : " ") + a;
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"ddpbench", c.ddpbench_version + " (git " + c.git_revision + ")"},
      {"host", c.host + ", " + std::to_string(c.cores) + " cores"},
      {"ranks ran on", hosts_text(r)},
      {"compiler", c.compiler},
      {"libtorch", c.libtorch_version},
      {"DDP engine", ddp_engine_text(r)},
      {"zero mode", zero_text(r)},
      {"gloo / MPI / NCCL", c.gloo_version + " / " + c.mpi_version + " / " +
                                (c.nccl_version.empty() ? "-" : c.nccl_version)},
      {"device", c.device.empty() ? "-" : c.device},
      {"GPU", c.gpu_devices.empty() ? c.gpu_status : c.gpu_devices + " (" + c.gpu_status + ")"},
      {"driver / CUDA / cuDNN", (c.gpu_driver.empty() ? "-" : c.gpu_driver) + " / " +
                                    (c.cuda_runtime.empty() ? "-" : c.cuda_runtime) + " / " +
                                    (c.cudnn_version.empty() ? "-" : c.cudnn_version)},
      {"numerics", c.numerics.empty() ? "-" : c.numerics},
      {"peak device memory", peak_memory_text(r)},
      {"started", c.started_at},
      {"command", argv}};
  std::string out = "<section id=\"environment\"><h2>Environment</h2><table>\n";
  for (const auto& [k, v] : rows) {
    out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", xml_escape(k), xml_escape(v));
  }
  return out + "</table></section>\n";
}

}  // namespace

std::string HtmlReporter::render(const RunReport& r) const {
  const RunConfig& c = r.config;
  size_t checked = 0;
  int64_t timed = 0;
  for (const auto& m : r.results) {
    checked = std::max(checked, m.losses.size());
    timed = std::max(timed, m.throughput.timed_steps);
  }
  return fmt::format(
             "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ddpbench: "
             "{}</title><style>{}</style></head><body>\n<h1>ddpbench: {}</h1><p>{} · {} · {} · "
             "global batch {} · {} checked step(s) · {} timed step(s)</p>\n",
             xml_escape(c.scenario), html::kReportStyle, xml_escape(c.scenario),
             xml_escape(c.model), xml_escape(c.dataset), xml_escape(describe_precision(c)),
             c.global_batch, checked, timed) +
         (c.model_file.empty() ? std::string()
                               : fmt::format("<p>model file {}: {}</p>\n", xml_escape(c.model_file),
                                             xml_escape(c.model_notes))) +
         verdict_section(r) + html::scaling_section(r) + html::repeats_section(r) +
         html::ranks_section(r) + html::phases_section(r) + html::loss_section(r) + amp_section(r) +
         sampler_section(r) + checks_section(r) + html::memory_section(r) +
         html::collectives_section(r) + environment_section(r) + "</body></html>\n";
}

}  // namespace ddpbench::reports
