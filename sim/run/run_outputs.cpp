#include "sim/run/run_outputs.hpp"

#include <cstdio>
#include <iostream>
#include <system_error>

#include "sim/net/net_config.hpp"
#include "sim/run/output_writers.hpp"

namespace fabricsim {

std::vector<OutputError> write_run_outputs(const std::string& dir_name, RunReport& rep,
                                           const std::string& flows) {
  const std::filesystem::path dir(dir_name);
  std::vector<OutputError> failures;
  // Writes one file; on failure removes what an earlier run left under its name (it would pass
  // for this run's) and goes on.
  const auto attempt = [&](const OutputWriter& writer) {
    const std::string path = (dir / writer.file).string();
    try {
      writer.write(path, rep);
      return true;
    } catch (const OutputError& e) {
      failures.push_back(e);
      remove_output_file(path);
      return false;
    }
  };
  // results.json first, in full; the text is kept to amend it in place should a second copy
  // not fit later.
  const std::string results_path = (dir / "results.json").string();
  const std::string first = results_json_text(rep);
  bool results = true;
  try {
    write_output_file(results_path, first);
  } catch (const OutputError& e) {
    results = false;
    failures.push_back(e);
    remove_output_file(results_path);
  }
  const size_t listed = rep.files_not_written.size();
  const OutputSettings settings{flows};
  for (const OutputWriter& writer : output_writers()) {  // an earlier run's, not written now
    if (!output_enabled(writer, settings, rep)) remove_output_file((dir / writer.file).string());
  }
  for (const OutputWriter& writer : output_writers()) {
    if (!output_enabled(writer, settings, rep)) continue;
    if (!attempt(writer)) rep.files_not_written.push_back({writer.file, failures.back().reason()});
  }
  if (results && rep.files_not_written.size() > listed) {
    // results.json was written before these failed: say so in it, through a temporary copy;
    // where even that does not fit, in place (the list is a few bytes more). If that fails too,
    // the first results.json is kept as it was (whole, without the list) or, if it could not be
    // put back, removed; stderr says which.
    const std::string second = results_json_text(rep);
    try {
      write_output_file(results_path, second);
    } catch (const OutputError&) {
      try {
        rewrite_output_file_in_place(results_path, first, second);
      } catch (const OutputError& e) {
        failures.push_back(e);
      }
    }
  }
  return failures;
}

void trace_not_written(const std::filesystem::path& dir, const OutputError& e,
                       std::vector<UnwrittenFile>& unwritten, std::vector<OutputError>& failures) {
  unwritten.push_back({"trace.json", e.reason()});
  failures.push_back(e);
  remove_output_file((dir / "trace.json").string());  // an earlier run's is not this one's
}

void print_wrote(std::ostream& out, const std::filesystem::path& dir, const RunReport& rep,
                 const ChromeTrace* trace, int64_t trace_cap, const std::string& flows) {
  const auto unwritten = [&](const std::string& name) {
    for (const UnwrittenFile& f : rep.files_not_written) {
      if (f.file == name) return true;
    }
    return false;
  };
  // results.json never lists itself: it is there when it was written (a failed one is removed).
  const bool results = std::filesystem::exists(dir / "results.json");
  std::string line;
  const auto add = [&](const std::string& text) {
    line += line.empty() ? (dir / text).string() : ", " + text;
  };
  if (results) add("results.json");
  const OutputSettings settings{flows};
  for (const OutputWriter& writer : output_writers()) {
    if (!output_enabled(writer, settings, rep) || unwritten(writer.file)) continue;
    add(writer.file);
    if (writer.wrote_note) line += writer.wrote_note(rep);
  }
  if (trace != nullptr && !trace->failed()) {
    add("trace.json");
    line += " (" + std::to_string(trace->events_written()) + " events";
    if (trace->truncated()) {
      // How much of the run the trace shows: the default cap can cover a few microseconds.
      char covers[128];
      std::snprintf(covers, sizeof covers, "the first %.3f us of %.3f us simulated (%.1f %%)",
                    static_cast<double>(trace->truncated_at_ps()) / 1e6,
                    static_cast<double>(rep.simulated_ps) / 1e6,
                    rep.simulated_ps > 0 ? 100.0 * static_cast<double>(trace->truncated_at_ps()) /
                                               static_cast<double>(rep.simulated_ps)
                                         : 100.0);
      line += "; stopped at the cap of " + std::to_string(trace_cap) + ", covering " + covers +
              ": raise it with --trace-events N";
    }
    line += ")";
  }
  std::string missing;
  if (!results) missing = "results.json";
  for (const UnwrittenFile& f : rep.files_not_written) {
    missing += (missing.empty() ? "" : ", ") + f.file;
  }
  out << "# wrote      : " << (line.empty() ? "nothing" : line);
  if (!missing.empty()) out << "; not written: " << missing << " (see stderr)";
  out << "\n";
}

void print_unwritten(std::ostream& err, const std::vector<OutputError>& failures) {
  if (failures.empty()) return;
  // results.json failed: not written at all, or written first and then not again with the list
  // (its first version stays, whole).
  enum { kListed, kNotWritten, kUnlisted } results = kListed;
  for (const OutputError& e : failures) {
    err << "fabricsim: " << e.what() << "\n";
    if (std::filesystem::path(e.path()).filename() == "results.json") {
      results = std::filesystem::exists(e.path()) ? kUnlisted : kNotWritten;
    }
  }
  err << "fabricsim: no file was left half-written; "
      << (results == kListed     ? "results.json lists the files not written (files_not_written)"
          : results == kUnlisted ? "results.json, written before them, does not list them"
                                 : "results.json was not written")
      << "\n";
}

int run_exit_code(const RunReport& rep, bool outputs_failed) {
  if (rep.interrupted) return kExitInterrupted;
  if (outputs_failed) return kExitOutput;
  if (rep.complete) return kExitOk;
  return rep.limited            ? kExitLimit
         : rep.deadlocked       ? kExitDeadlock
         : rep.transport_failed ? kExitTransport
                                : kExitInternal;
}

int stop_before_simulation(const RunOptions& opts, const Scenario& sc, const Prepared* prepared,
                           const std::string& how_far) {
  RunReport rep;
  if (prepared != nullptr) {
    rep = report_header(sc, *prepared);
  } else {  // the fabric was not built: its kind is known, its size is not
    rep.scenario = sc.name;
    rep.seed = sc.seed;
    rep.mode = sc.mode;
    rep.congestion_control = congestion_control_in_effect(sc);
    rep.fabric.kind = sc.topology.kind;
    rep.fabric.oversubscription = sc.topology.oversubscription;
    rep.fabric.host_rate_bps = sc.link.host_rate_bps;
    rep.fabric.server_profile = sc.server.profile;
    rep.has_workload = false;  // no NCCL setup was made: `nccl` is left out
    rep.has_training = sc.training.enabled;
  }
  rep.complete = false;
  rep.interrupted = true;
  rep.stop_reason = "interrupted before the simulation started (" + how_far + ")";
  if (opts.out_given && opts.reports) {
    const std::filesystem::path dir(opts.out_dir);
    // nothing was traced: no trace.json of an earlier run beside these
    remove_output_file((dir / "trace.json").string());
    std::vector<OutputError> failures = write_run_outputs(opts.out_dir, rep, opts.flows);
    print_wrote(std::cout, dir, rep, nullptr, 0, opts.flows);
    print_unwritten(std::cerr, failures);
  }
  if (opts.reports) std::cerr << "fabricsim: run " << rep.stop_reason << "\n";
  return kExitInterrupted;
}

}  // namespace fabricsim
