// compare_points(): a sweep's points grouped into fabrics and measurements (compare.hpp).
#include "sim/report/compare.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <tuple>

namespace fabricsim {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

bool training_axis(const std::string& key) {
  return key == "training" || starts_with(key, "training.");
}

/// `jobs` (the whole list), jobs.KEY or jobs[I].KEY: the jobs are the workload.
bool jobs_axis(const std::string& key) {
  return key == "jobs" || starts_with(key, "jobs.") || starts_with(key, "jobs[");
}

/// A whole jobs list as a label: its jobs' names joined by " + " ("allreduce + alltoall"),
/// read from the `name:` keys of the YAML text; "" when it names none.
std::string job_names(const std::string& value) {
  std::string out;
  int depth = 0;  // brackets open: a job's own keys are at depth 2 ("[{name: ...")
  for (size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    if (depth != 2 || value.compare(i, 5, "name:") != 0) continue;
    if (i > 0 && value[i - 1] != '{' && value[i - 1] != ' ' && value[i - 1] != ',') continue;
    const size_t b = value.find_first_not_of(' ', i + 5);
    const size_t e = b == std::string::npos ? b : value.find_first_of(",}", b);
    if (b == std::string::npos || e == std::string::npos) break;
    std::string name = value.substr(b, e - b);
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (name.size() >= 2 && (name.front() == '\'' || name.front() == '"')) {
      name = name.substr(1, name.size() - 2);
    }
    if (!out.empty()) out += " + ";
    out += name;
  }
  return out;
}

/// An axis measured on each fabric with the workload's: the workload itself, and how it is
/// measured: the seed (ECMP hash salts: the spread of one fabric, not another fabric) and the
/// mode (packet or flow: two models of the same fabric).
bool workload_axis(const std::string& key) {
  return key == "workload" || starts_with(key, "workload.") || key == "seed" || key == "mode" ||
         jobs_axis(key);
}

/// The status of a point up to its first ':' ("incomplete: stalled …" -> "incomplete").
std::string short_status(const std::string& status) {
  const size_t colon = status.find(':');
  return colon == std::string::npos ? status : status.substr(0, colon);
}

/// "2" from 2.0, "1.5" from 1.5: a ratio as people write it.
std::string ratio_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// A --vary value as it reads in a label: a kind or collective bare, a ratio "2:1", anything
/// else "name=value" (name = the key's last part).
std::string value_label(const std::string& key, const std::string& value) {
  const size_t dot = key.rfind('.');
  const std::string name = dot == std::string::npos ? key : key.substr(dot + 1);
  if (name == "kind" || key == "transport" || key == "workload.collective") return value;
  if (key == "jobs") {
    const std::string names = job_names(value);
    if (!names.empty()) return names;
  }
  if (name == "oversubscription" && !value.empty() &&
      value.find_first_not_of("0123456789.") == std::string::npos) {
    return value + ":1";
  }
  return name + "=" + value;
}

/// The labels of `keys` (indices into the axes) joined by `sep`.
std::string join_labels(const std::vector<std::string>& axes, const std::vector<size_t>& keys,
                        const std::vector<std::string>& values, const std::string& sep, bool full) {
  std::string out;
  for (const size_t a : keys) {
    out += (out.empty() ? "" : sep) +
           (full ? axes[a] + "=" + values[a] : value_label(axes[a], values[a]));
  }
  return out;
}

/// The values of `keys` in `values`: the key of a group of points.
std::vector<std::string> pick(const std::vector<size_t>& keys,
                              const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const size_t a : keys) out.push_back(a < values.size() ? values[a] : std::string());
  return out;
}

/// j[key] as a number, nullopt when absent, null or not a number.
std::optional<double> number(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string text(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

const nlohmann::json& member(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

/// A value of point `p`, doubtful when the point did not complete.
CompareValue from_point(const ComparePoint& p, double v) {
  CompareValue c;
  c.value = v;
  c.doubtful = !p.complete;
  c.point = p.point;
  return c;
}

/// Why fabric points `candidates` give no value: the first one's short status, or "not
/// measured" when it completed (it has no such number), "not run" when there is none.
CompareValue missing_from(const std::vector<const ComparePoint*>& candidates) {
  CompareValue c;
  if (candidates.empty()) {
    c.missing = "not run";
  } else {
    const ComparePoint& p = *candidates.front();
    c.missing = p.complete ? "not measured" : short_status(p.status);
    c.point = p.point;
  }
  return c;
}

/// Sets delta_pct of every value against the first.
void set_deltas(std::vector<CompareValue>& row) {
  if (row.empty()) return;
  const std::optional<double> base = row.front().value;
  for (size_t f = 1; f < row.size(); ++f) {
    CompareValue& v = row[f];
    if (!v.value || !base) continue;
    if (*base == 0) {
      if (*v.value == 0) v.delta_pct = 0.0;
    } else {
      v.delta_pct = (*v.value - *base) / *base * 100.0;
    }
  }
}

/// The points of fabric `f` whose values at `keys` are `key`, in point order.
std::vector<const ComparePoint*> points_of(const CompareInput& in,
                                           const std::vector<size_t>& fabric_of, size_t f,
                                           const std::vector<size_t>& keys,
                                           const std::vector<std::string>& key) {
  std::vector<const ComparePoint*> out;
  for (size_t i = 0; i < in.points.size(); ++i) {
    if (fabric_of[i] == f && pick(keys, in.points[i].values) == key) out.push_back(&in.points[i]);
  }
  return out;
}

/// "dp 64 x tp 8 x pp 1 = 512 GPUs, 1 layer, 1 microbatch, 3 DDP buckets" from results.json
/// `training`.
std::string step_shape(const nlohmann::json& t) {
  const auto n = [&](const char* k) {
    const std::optional<double> v = number(t, k);
    return v ? static_cast<int64_t>(*v) : int64_t{0};
  };
  const auto plural = [](int64_t v, const std::string& one) {
    return std::to_string(v) + " " + one + (v == 1 ? "" : "s");
  };
  return "dp " + std::to_string(n("dp")) + " x tp " + std::to_string(n("tp")) + " x pp " +
         std::to_string(n("pp")) + " = " + std::to_string(n("ranks")) + " GPUs, " +
         plural(n("layers"), "layer") + ", " + plural(n("microbatches"), "microbatch") + ", " +
         plural(n("buckets"), "DDP bucket");
}

/// The jobs of the points with `jobs:` (results.json `jobs`), per (workload values, job name)
/// in first-seen order: each fabric's busbw of the job beside the others, and its slowdown.
void compare_jobs(const CompareInput& in, const std::vector<size_t>& fabric_of,
                  const std::vector<size_t>& workload_keys, CompareData& d) {
  std::vector<std::pair<std::vector<std::string>, std::string>> groups;
  for (const ComparePoint& p : in.points) {
    if (!p.results) continue;
    for (const nlohmann::json& j : member(*p.results, "jobs")) {
      const auto g = std::make_pair(pick(workload_keys, p.values), text(j, "name"));
      if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
    }
  }
  for (const auto& [key, name] : groups) {
    std::vector<std::string> values(in.axes.size());
    for (size_t k = 0; k < workload_keys.size(); ++k) values[workload_keys[k]] = key[k];
    CompareJob job;
    job.workload = join_labels(in.axes, workload_keys, values, " ", false);
    job.job = name;
    for (size_t f = 0; f < d.fabrics.size(); ++f) {
      const auto candidates = points_of(in, fabric_of, f, workload_keys, key);
      std::optional<CompareValue> time, busbw, slowdown, overlap;
      for (const ComparePoint* p : candidates) {
        if (!p->results) continue;
        for (const nlohmann::json& j : member(*p->results, "jobs")) {
          if (text(j, "name") != name) continue;
          const nlohmann::json& c = member(j, "collective");
          if (job.collective.empty()) {
            job.collective = text(c, "collective");  // "training_step" for a step's job
            job.ranks = static_cast<int64_t>(number(c, "ranks").value_or(0));
            job.size_bytes = static_cast<int64_t>(number(c, "size_bytes").value_or(0));
          }
          if (member(j, "complete") == true && number(c, "busbw_GBps")) {
            busbw = from_point(*p, *number(c, "busbw_GBps"));
          }
          if (member(j, "complete") == true && number(c, "time_us")) {
            time = from_point(*p, *number(c, "time_us"));
          }
          if (number(j, "slowdown")) slowdown = from_point(*p, *number(j, "slowdown"));
          if (number(j, "overlap")) overlap = from_point(*p, *number(j, "overlap"));
          break;
        }
        if (time) break;
      }
      job.time_us.push_back(time ? *time : missing_from(candidates));
      job.busbw_GBps.push_back(busbw ? *busbw : missing_from(candidates));
      job.slowdown.push_back(slowdown ? *slowdown : missing_from(candidates));
      if (!overlap && time) {  // it ran with no other job in its list
        overlap = CompareValue{};
        overlap->missing = "-";
        overlap->point = time->point;
      }
      job.overlap.push_back(overlap ? *overlap : missing_from(candidates));
    }
    set_deltas(job.time_us);
    set_deltas(job.busbw_GBps);
    set_deltas(job.slowdown);
    d.jobs.push_back(std::move(job));
  }
}

}  // namespace

CompareData compare_points(const CompareInput& in) {
  CompareData d;
  d.scenario = in.scenario;
  d.command = in.command;
  d.points = static_cast<int64_t>(in.points.size());
  std::vector<size_t> fabric_keys, workload_keys, training_keys, measured_keys;
  for (size_t a = 0; a < in.axes.size(); ++a) {
    const std::string& k = in.axes[a];
    if (workload_axis(k) || training_axis(k)) {
      measured_keys.push_back(a);
      (training_axis(k) ? training_keys : workload_keys).push_back(a);
      d.measured_axes.push_back(k);
    } else {
      fabric_keys.push_back(a);
      d.fabric_axes.push_back(k);
    }
  }

  // Fabrics, in the order of their first point.
  std::vector<size_t> fabric_of(in.points.size());
  std::map<std::vector<std::string>, size_t> fabric_index;
  for (size_t i = 0; i < in.points.size(); ++i) {
    const ComparePoint& p = in.points[i];
    const std::vector<std::string> key = pick(fabric_keys, p.values);
    auto [it, added] = fabric_index.emplace(key, d.fabrics.size());
    if (added) {
      CompareFabric f;
      f.label = join_labels(in.axes, fabric_keys, p.values, " ", false);
      f.settings = join_labels(in.axes, fabric_keys, p.values, ", ", true);
      d.fabrics.push_back(f);
    }
    fabric_of[i] = it->second;
    d.fabrics[it->second].points.push_back(p.point);
  }
  // The % compare with the first fabric that has a point that completed: with an unbuildable
  // or failed fabric first, every difference would be n/a. That fabric moves to the front.
  {
    size_t ref = 0;
    while (ref < d.fabrics.size()) {
      bool complete = false;
      for (size_t i = 0; i < in.points.size(); ++i) {
        complete |= fabric_of[i] == ref && in.points[i].complete;
      }
      if (complete) break;
      ++ref;
    }
    if (ref > 0 && ref < d.fabrics.size()) {
      std::rotate(d.fabrics.begin(), d.fabrics.begin() + static_cast<std::ptrdiff_t>(ref),
                  d.fabrics.begin() + static_cast<std::ptrdiff_t>(ref) + 1);
      for (size_t& f : fabric_of) f = f == ref ? 0 : (f < ref ? f + 1 : f);
    }
  }
  std::set<std::string> seeds, modes;
  for (size_t i = 0; i < in.points.size(); ++i) {
    const ComparePoint& p = in.points[i];
    CompareFabric& f = d.fabrics[fabric_of[i]];
    if (p.results) {
      const nlohmann::json& r = *p.results;
      if (const auto s = member(r, "seed"); s.is_number_unsigned() || s.is_number_integer()) {
        seeds.insert(s.dump());
      }
      if (!text(r, "mode").empty()) modes.insert(text(r, "mode"));
      const nlohmann::json& fab = member(r, "fabric");
      if (!f.built && fab.is_object()) {
        f.built = true;
        f.kind = text(fab, "kind");
        f.gpus = static_cast<int64_t>(number(fab, "gpus").value_or(0));
        f.switches = static_cast<int64_t>(number(fab, "switches").value_or(0));
        f.links = static_cast<int64_t>(number(fab, "links").value_or(0));
        f.bisection_bandwidth_bps =
            static_cast<int64_t>(number(fab, "bisection_bandwidth_bps").value_or(0));
        f.oversubscription = number(fab, "oversubscription").value_or(0);
      }
      if (!f.cost_usd.value) {
        if (const std::optional<double> c = number(fab, "cost_usd")) {
          f.cost_usd.value = *c;  // the fabric's price: whatever the run did, never doubtful
          f.cost_usd.point = p.point;
        }
      }
    }
    if (!f.cost_usd.value && p.cost_usd) {
      f.cost_usd.value = *p.cost_usd;
      f.cost_usd.point = p.point;
    }
  }
  for (size_t f = 0; f < d.fabrics.size(); ++f) {
    CompareFabric& fab = d.fabrics[f];
    if (fab.label.empty()) {  // no fabric axis: the scenario's own fabric
      fab.label = fab.built ? fab.kind + " " + ratio_text(fab.oversubscription) + ":1"
                            : std::string("the scenario's fabric");
      fab.settings = "as in the scenario";
    }
    if (!fab.cost_usd.value) {
      std::vector<const ComparePoint*> all;
      for (size_t i = 0; i < in.points.size(); ++i) {
        if (fabric_of[i] == f) all.push_back(&in.points[i]);
      }
      const CompareValue why = missing_from(all);
      fab.cost_usd.missing =
          fab.built || why.missing == "not measured" ? "no cost_model" : why.missing;
    }
  }
  d.seed = seeds.size() == 1 ? *seeds.begin() : seeds.empty() ? "" : "varied";
  d.mode = modes.size() == 1 ? *modes.begin() : modes.empty() ? "" : "packet and flow";
  std::vector<CompareValue> costs;
  for (const CompareFabric& f : d.fabrics) costs.push_back(f.cost_usd);
  set_deltas(costs);
  for (size_t f = 0; f < d.fabrics.size(); ++f) d.fabrics[f].cost_usd = costs[f];

  // busbw: rows keyed by (workload.* values, collective, size), in first-seen order of
  // (workload.* values, collective), sizes ascending.
  struct RowKey {
    std::vector<std::string> workload;
    std::string collective;
    bool operator<(const RowKey& o) const {
      return std::tie(workload, collective) < std::tie(o.workload, o.collective);
    }
  };
  std::vector<RowKey> groups;
  std::map<RowKey, std::set<int64_t>> sizes;
  for (const ComparePoint& p : in.points) {
    if (!p.results) continue;
    const nlohmann::json& rows = member(*p.results, "collectives");
    if (!rows.is_array()) continue;
    for (const nlohmann::json& row : rows) {
      const std::optional<double> size = number(row, "size_bytes");
      if (!size || !number(row, "busbw_GBps")) continue;
      const RowKey k{pick(workload_keys, p.values), text(row, "collective")};
      if (!sizes.count(k)) groups.push_back(k);
      sizes[k].insert(static_cast<int64_t>(*size));
    }
  }
  std::vector<size_t> workload_no_collective;
  for (const size_t a : workload_keys) {
    if (in.axes[a] != "workload.collective") workload_no_collective.push_back(a);
  }
  for (const RowKey& g : groups) {
    std::vector<std::string> values(in.axes.size());
    for (size_t k = 0; k < workload_keys.size(); ++k) values[workload_keys[k]] = g.workload[k];
    const std::string others = join_labels(in.axes, workload_no_collective, values, " ", false);
    for (const int64_t size : sizes[g]) {
      CompareBusbw row;
      row.workload = g.collective + (others.empty() ? "" : " " + others);
      row.size_bytes = size;
      row.largest = size == *sizes[g].rbegin();
      for (size_t f = 0; f < d.fabrics.size(); ++f) {
        const auto candidates = points_of(in, fabric_of, f, workload_keys, g.workload);
        std::optional<CompareValue> found;
        std::string algorithm;
        for (const ComparePoint* p : candidates) {
          if (!p->results) continue;
          for (const nlohmann::json& r : member(*p->results, "collectives")) {
            if (text(r, "collective") == g.collective && number(r, "size_bytes") &&
                static_cast<int64_t>(*number(r, "size_bytes")) == size && number(r, "busbw_GBps")) {
              found = from_point(*p, *number(r, "busbw_GBps"));
              algorithm = text(r, "algorithm") + "/" + text(r, "protocol");
              break;
            }
          }
          if (found) break;
        }
        row.busbw_GBps.push_back(found ? *found : missing_from(candidates));
        row.algorithm.push_back(algorithm);
      }
      set_deltas(row.busbw_GBps);
      d.busbw.push_back(row);
    }
  }

  compare_jobs(in, fabric_of, workload_keys, d);

  // The training step, per training.* combination.
  bool any_step = in.training;
  std::vector<std::vector<std::string>> step_keys;
  for (const ComparePoint& p : in.points) {
    const bool has = p.results && member(*p.results, "training").is_object();
    any_step = any_step || has;
    const std::vector<std::string> k = pick(training_keys, p.values);
    if (std::find(step_keys.begin(), step_keys.end(), k) == step_keys.end()) step_keys.push_back(k);
  }
  for (const std::vector<std::string>& k : any_step ? step_keys : decltype(step_keys){}) {
    CompareStep s;
    std::vector<std::string> values(in.axes.size());
    for (size_t t = 0; t < training_keys.size(); ++t) values[training_keys[t]] = k[t];
    s.training = join_labels(in.axes, training_keys, values, " ", false);
    for (size_t f = 0; f < d.fabrics.size(); ++f) {
      const auto candidates = points_of(in, fabric_of, f, training_keys, k);
      const ComparePoint* first = nullptr;
      for (const ComparePoint* p : candidates) {
        if (!p->results) continue;
        const nlohmann::json& t = member(*p->results, "training");
        if (!t.is_object() || !number(t, "step_ps")) continue;
        if (first == nullptr) {
          first = p;
          if (s.shape.empty()) s.shape = step_shape(t);
          s.step_ms.push_back(from_point(*p, *number(t, "step_ps") / 1e9));
          s.exposed_comm_ms.push_back(
              from_point(*p, number(t, "exposed_comm_ps").value_or(0) / 1e9));
          s.gpu_utilization_pct.push_back(
              from_point(*p, number(t, "gpu_utilization").value_or(0) * 100.0));
        } else if (*number(t, "step_ps") !=
                   *number(member(*first->results, "training"), "step_ps")) {
          char buf[256];
          std::snprintf(buf, sizeof buf,
                        "%s: point %lld's step takes %.3f ms, point %lld's %.3f ms (the table "
                        "shows point %lld's)",
                        d.fabrics[f].label.c_str(), static_cast<long long>(first->point),
                        *s.step_ms.back().value, static_cast<long long>(p->point),
                        *number(t, "step_ps") / 1e9, static_cast<long long>(first->point));
          s.notes.push_back(buf);
        }
      }
      if (first == nullptr) {
        CompareValue why = missing_from(candidates);
        if (why.missing == "not measured") why.missing = "no step";
        s.step_ms.push_back(why);
        s.exposed_comm_ms.push_back(why);
        s.gpu_utilization_pct.push_back(why);
      }
    }
    set_deltas(s.step_ms);
    set_deltas(s.exposed_comm_ms);
    set_deltas(s.gpu_utilization_pct);
    d.steps.push_back(s);
  }

  // Queues and PFC, per combination of every measured value.
  std::vector<std::vector<std::string>> queue_keys;
  for (const ComparePoint& p : in.points) {
    const std::vector<std::string> k = pick(measured_keys, p.values);
    if (std::find(queue_keys.begin(), queue_keys.end(), k) == queue_keys.end())
      queue_keys.push_back(k);
  }
  for (const std::vector<std::string>& k : queue_keys) {
    CompareQueues q;
    std::vector<std::string> values(in.axes.size());
    for (size_t m = 0; m < measured_keys.size(); ++m) values[measured_keys[m]] = k[m];
    q.workload = join_labels(in.axes, measured_keys, values, " ", false);
    for (size_t f = 0; f < d.fabrics.size(); ++f) {
      const auto candidates = points_of(in, fabric_of, f, measured_keys, k);
      const ComparePoint* p = nullptr;
      for (const ComparePoint* c : candidates) {
        if (c->results && member(*c->results, "counters").is_object()) {
          p = c;
          break;
        }
      }
      if (p == nullptr) {
        const CompareValue why = missing_from(candidates);
        for (auto* v :
             {&q.max_queue_bytes, &q.worst_port_p99_bytes, &q.pfc_pause_frames, &q.pfc_paused_us}) {
          v->push_back(why);
        }
        continue;
      }
      if (member(*p->results, "mode") == "flow") {
        // The flow mode shares links max-min fair: it has no queues nor PFC, and its zeros
        // are not a fabric's (a -100 % against a packet-mode fabric would read as a win).
        CompareValue m;
        m.missing = "not modelled (flow mode)";
        m.point = p->point;
        for (auto* v :
             {&q.max_queue_bytes, &q.worst_port_p99_bytes, &q.pfc_pause_frames, &q.pfc_paused_us}) {
          v->push_back(m);
        }
        continue;
      }
      const nlohmann::json& c = member(*p->results, "counters");
      const auto counter = [&](const char* key, double scale) {
        const std::optional<double> v = number(c, key);
        if (!v) {
          CompareValue m;
          m.missing = "not measured";
          m.point = p->point;
          return m;
        }
        return from_point(*p, *v * scale);
      };
      q.max_queue_bytes.push_back(counter("max_queue_bytes", 1));
      q.pfc_pause_frames.push_back(counter("pfc_pause_tx", 1));
      q.pfc_paused_us.push_back(counter("paused_ps", 1e-6));
      std::optional<int64_t> worst = p->worst_port_p99_queue_bytes;
      const nlohmann::json& ports = member(*p->results, "ports");
      if (!worst && ports.is_array() && member(*p->results, "ports_truncated") == false) {
        worst = 0;
        for (const nlohmann::json& port : ports) {
          worst =
              std::max(*worst, static_cast<int64_t>(number(port, "p99_queue_bytes").value_or(0)));
        }
      }
      if (worst) {
        q.worst_port_p99_bytes.push_back(from_point(*p, static_cast<double>(*worst)));
      } else {
        CompareValue m;
        m.missing = "not measured";
        q.worst_port_p99_bytes.push_back(m);
      }
    }
    for (auto* v :
         {&q.max_queue_bytes, &q.worst_port_p99_bytes, &q.pfc_pause_frames, &q.pfc_paused_us}) {
      set_deltas(*v);
    }
    d.queues.push_back(q);
  }

  for (size_t i = 0; i < in.points.size(); ++i) {
    const ComparePoint& p = in.points[i];
    if (p.complete) continue;
    CompareProblem pr;
    pr.point = p.point;
    pr.fabric = d.fabrics[fabric_of[i]].label;
    pr.workload = join_labels(in.axes, measured_keys, p.values, " ", false);
    pr.status = short_status(p.status);
    pr.reason = p.reason;
    d.problems.push_back(pr);
  }
  const auto doubtful = [](const std::vector<CompareValue>& row) {
    return std::any_of(row.begin(), row.end(),
                       [](const CompareValue& v) { return v.value && v.doubtful; });
  };
  for (const CompareBusbw& b : d.busbw) d.doubtful = d.doubtful || doubtful(b.busbw_GBps);
  for (const CompareJob& j : d.jobs) d.doubtful = d.doubtful || doubtful(j.busbw_GBps);
  for (const CompareStep& s : d.steps) d.doubtful = d.doubtful || doubtful(s.step_ms);
  for (const CompareQueues& q : d.queues) d.doubtful = d.doubtful || doubtful(q.max_queue_bytes);
  return d;
}

}  // namespace fabricsim
