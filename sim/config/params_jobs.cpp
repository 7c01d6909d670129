// The `jobs:` section: several jobs on one fabric (JobConfig, jobs/job_params.hpp), each a map
// whose keys are job_keys(): the job's own (name, gpus, size, iterations, start, placement,
// servers, seed, nccl) and the `workload:` keys that say which collective it runs (read by the
// workload rows' own rules). Placed and planned against the fabric by sim/run/jobs.cpp.
#include <algorithm>
#include <set>

#include "sim/config/loader.hpp"
#include "sim/config/loader_detail.hpp"

namespace fabricsim::config_detail {

namespace {

const QuantitySpec kJobStart{
    "time", "1ms", parse_time_ps, 0, 3'600'000'000'000'000, "a time from 0s to 3600s"};
const Choices kPlacements{"placement", {}, {}, {}, "jobs[].placement"};

/// The `workload:` keys a job takes, under the same names.
constexpr const char* kJobWorkloadKeys[] = {
    "collective", "algorithm", "protocol", "datatype", "redop", "op", "ranks_per_server", "root"};

// clang-format off
/// What nccl-tests, Slurm and other tools call these keys: "did you mean" for them too.
const std::pair<const char*, const char*> kJobAliases[] = {
  {"ngpus", "gpus"}, {"ranks", "gpus"}, {"nranks", "gpus"}, {"ntasks", "gpus"},
  {"bytes", "size"}, {"minbytes", "size"}, {"maxbytes", "size"}, {"message_size", "size"},
  {"iters", "iterations"}, {"n", "iterations"}, {"repeat", "iterations"},
  {"start_time", "start"}, {"at", "start"}, {"time", "start"},
  {"policy", "placement"}, {"distribution", "placement"},
  {"nodes", "servers"}, {"nodelist", "servers"}, {"hosts", "servers"},
  {"placement_seed", "seed"},
  {"job", "name"},
};
// clang-format on

const char* const kExample = "e.g. {name: ring, collective: all_reduce, size: 64MiB, gpus: 16}";

}  // namespace

std::span<const ItemKey<JobConfig>> job_keys() {
  using J = JobConfig;
  static const std::vector<ItemKey<J>> rows = [] {
    // clang-format off
    std::vector<ItemKey<J>> r{
    {"name", false, String(), own<&J::name>, "the job's name in the results; default job<i>, i its place in the list"},
    {"gpus", true, Int(2, 1 << 20), own<&J::gpus>, "ranks (GPUs) the job runs on"},
    {"size", false, Quantity(kSweepSize), own<&J::bytes>,
     "the collective's size, as nccl-tests' size column (-b = -e); required without training"},
    {"iterations", false, Int(1, 1'000'000), own<&J::iterations>,
     "the collective back to back on each rank (nccl-tests -n)"},
    {"start", false, Quantity(kJobStart), own<&J::start_ps>, "when its ranks launch the first"},
    {"placement", false, Choice(kPlacements), own<&J::placement>,
     "packed | spread | random: which free servers it gets (when servers is not given)"},
    {"servers", false, Custom("list", "server indices in rank order, e.g. [0, 1, 4, 5]"),
     own<&J::servers>, "the servers it runs on (server s: hosts s x G … s x G + G - 1)",
     [](const Value& v, J& j) {
       j.servers.clear();
       for (const Value& item : v.items("a list of server indices, e.g. [0, 1, 4, 5]", 1, 1 << 20))
         j.servers.push_back(static_cast<int>(item.integer(0, (1 << 20) - 1)));
     }},
    {"seed", false, Unsigned(), own<&J::placement_seed>,
     "placement random's seed; 0 = from the scenario's seed and the job's index"},
    {"nccl", false, Custom("map", "nccl keys, e.g. {algo: ring, nchannels: 4}"), nullptr,
     "the job's own nccl keys over the scenario's nccl section", nullptr, true},
    {"training", false, Custom("map", "training keys, e.g. {tp: 8, layers: [...]}"), nullptr,
     "a training step the job runs instead of a collective (the training section's keys)",
     nullptr, true},
    };
    // clang-format on
    // The workload keys, with the workload rows' own rules and documentation.
    for (const char* key : kJobWorkloadKeys) {
      for (const Field& f : fields()) {
        if (f.section != std::string("workload") || f.key != std::string(key)) continue;
        Slot (*member)(J&) = nullptr;
        const std::string k = key;
        if (k == "collective") member = [](J& j) -> Slot { return &j.workload.collective; };
        if (k == "algorithm") member = [](J& j) -> Slot { return &j.workload.algorithm; };
        if (k == "protocol") member = [](J& j) -> Slot { return &j.workload.protocol; };
        if (k == "datatype") member = [](J& j) -> Slot { return &j.workload.datatype; };
        if (k == "redop" || k == "op") member = [](J& j) -> Slot { return &j.workload.redop; };
        if (k == "ranks_per_server")
          member = [](J& j) -> Slot { return &j.workload.ranks_per_server; };
        if (k == "root") member = [](J& j) -> Slot { return &j.workload.root; };
        r.push_back({key, false, f.rule, member, f.doc});
      }
    }
    return r;
  }();
  return rows;
}

void parse_jobs(const Context& ctx, const Value& section, Scenario& s) {
  s.jobs.clear();
  std::vector<std::string> keys;
  for (const ItemKey<JobConfig>& k : job_keys()) keys.emplace_back(k.key);
  std::set<std::string> names;
  size_t i = 0;
  for (const Value& item : section.items(std::string("a list of jobs, ") + kExample, 1, 4096)) {
    const std::string path = std::string(kJobsSection) + "[" + std::to_string(i) + "]";
    if (!item.node().IsMap()) {
      item.fail("expected a job: a map with " + join_words(keys, ", ") + ", " + kExample +
                ", got " + describe(item.node()));
    }
    const auto given = map_keys(ctx, item, path, keys, "a job", kJobAliases);
    JobConfig job;
    job.nccl = s.nccl;  // the scenario's nccl section, the job's own keys over it (below)
    for (const ItemKey<JobConfig>& k : job_keys()) {
      const auto it = given.find(k.key);
      if (it == given.end()) continue;
      s.origins[it->second.path()] = it->second.origin();
      if (!k.read_apart) read_item(k, it->second, job);
    }
    s.origins[path] = item.origin();
    const auto fail_at = [&](const char* key, const std::string& message) {
      const auto it = given.find(key);
      (it != given.end() ? it->second : item).fail(message);
    };
    for (const ItemKey<JobConfig>& k : job_keys()) {
      if (k.required && !given.count(k.key)) {
        fail_at(k.key,
                "missing required key " + std::string(k.key) + ": " + k.doc + ", " + kExample);
      }
    }
    if (const auto it = given.find("training"); it != given.end()) {
      // The step's collectives are its own: a collective's keys say nothing here.
      for (const char* key : kJobWorkloadKeys) {
        if (given.count(key)) {
          fail_at(key, std::string(key) +
                           " is a collective's; this job runs its training step (training:), "
                           "whose gradient AllReduces NCCL plans itself");
        }
      }
      if (given.count("size")) {
        fail_at("size", "size is a collective's; a training job's sizes are its layers' params");
      }
      Scenario t;
      t.path = s.path;
      parse_training(ctx, it->second, t, it->second.path());
      job.training = t.training;
      for (const auto& [key, origin] : t.origins) s.origins[key] = origin;
    } else if (!given.count("size")) {
      fail_at("size", std::string("missing required key size: the collective's size (or a "
                                  "training step: training), ") +
                          kExample);
    }
    if (given.count("op") && given.count("redop")) {
      fail_at("op", "op is redop under nccl-tests' name; give one of the two");
    }
    if (given.count("servers") && given.count("placement")) {
      fail_at("placement", "give servers (the job's own list) or placement (a policy), not both");
    }
    if (given.count("seed") && (job.placement != "random" || given.count("servers"))) {
      // Valid, and does nothing: a sweep over placements sets it for random's points.
      s.warnings.push_back(config_warning(
          given.at("seed").origin(), path + ".seed",
          "not used: seed is the random placement's, and this job's placement is " +
              (given.count("servers") ? std::string("its servers list") : job.placement)));
    }
    if (const auto it = given.find("nccl"); it != given.end() && !it->second.node().IsNull()) {
      const Value& v = it->second;
      if (!v.node().IsMap()) {
        v.fail("expected a map of nccl keys (" + join_words(keys_of("nccl"), ", ") + "), got " +
               describe(v.node()));
      }
      std::map<std::string, Value> own;
      collect(ctx, v.node(), "nccl", own, path + ".");
      Scenario t;
      t.path = s.path;
      t.nccl = job.nccl;
      parse_fields(ctx, own, t, false, "job " + std::to_string(i) + "'s");
      job.nccl = t.nccl;
      for (const auto& [key, value] : own) s.origins[path + "." + key] = value.origin();
    }
    if (job.name.empty()) job.name = "job" + std::to_string(i);
    if (!names.insert(job.name).second) {
      fail_at("name", "duplicate job name '" + job.name + "'; each job's results are by name");
    }
    s.jobs.push_back(std::move(job));
    ++i;
  }
}

}  // namespace fabricsim::config_detail

namespace fabricsim::config_detail {

bool apply_jobs_override(YAML::Node& root, const std::string& path, const std::string& value_text,
                         const std::string& where, Context& ctx) {
  const std::string jobs = kJobsSection;
  if (path != jobs && path.rfind(jobs + ".", 0) != 0 && path.rfind(jobs + "[", 0) != 0) {
    return false;
  }
  const auto fail = [&](const std::string& message) {
    throw ConfigError(where, 0, 0, path, message);
  };
  const YAML::Node value = override_value(value_text, where, path);
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) fail("cannot set a key: the scenario file's top level is not a map");
  if (path == jobs) {  // the whole list, e.g. --vary 'jobs=[{...}, {...}],[{...}]'
    for (const auto& [key, earlier] : ctx.overrides) {
      if (key.rfind(jobs + "[", 0) == 0 || key.rfind(jobs + ".", 0) == 0) {
        fail("jobs=[...] replaces the whole list, and with it " + key + " of " + earlier +
             " (every --set comes before every --vary); give the key inside each list, or as "
             "a --vary listed after --vary jobs=...");
      }
    }
    if (!value.IsSequence()) {
      fail(
          "jobs is a list; give it whole, e.g. jobs=[{collective: all_reduce, size: 64MiB, "
          "gpus: 8}], or one key of every job (jobs.placement=spread) or of one "
          "(jobs[0].size=1MiB)");
    }
    root[jobs] = value;
    ctx.overrides[path] = where;
    return true;
  }
  // jobs.KEY (every job) or jobs[I].KEY (job I)
  size_t index = SIZE_MAX;
  std::string key;
  if (path[jobs.size()] == '[') {
    const size_t close = path.find(']');
    const std::string digits = path.substr(
        jobs.size() + 1, close == std::string::npos ? std::string::npos : close - jobs.size() - 1);
    if (close == std::string::npos || digits.empty() ||
        digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 6 ||
        path.size() < close + 3 || path[close + 1] != '.') {
      fail("expected jobs[I].KEY with I a job's index, e.g. jobs[0].placement=spread");
    }
    index = std::stoul(digits);
    key = path.substr(close + 2);
  } else {
    key = path.substr(jobs.size() + 1);
  }
  std::vector<std::string> keys;
  for (const ItemKey<JobConfig>& k : job_keys()) keys.emplace_back(k.key);
  // nccl.KEY or training.KEY: a key of a job's own section.
  std::string sub;
  if (const size_t dot = key.find('.'); dot != std::string::npos) {
    sub = key.substr(0, dot);
    const std::string inner = key.substr(dot + 1);
    const std::vector<std::string> valid = sub == "nccl"       ? keys_of("nccl")
                                           : sub == "training" ? training_key_names()
                                                               : std::vector<std::string>{};
    if (valid.empty()) {
      fail("'" + sub +
           "' of a job is not a section; only nccl and training hold keys, e.g. "
           "jobs[0].nccl.algo=ring");
    }
    if (std::find(valid.begin(), valid.end(), inner) == valid.end()) {
      const std::string guess = closest_match(inner, valid);
      fail("unknown key '" + inner + "' of a job's " + sub +
           (guess.empty() ? "; valid keys are: " + join_words(valid, ", ")
                          : "; did you mean '" + guess + "'?"));
    }
    key = inner;
  } else if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
    const std::string guess = closest_match(key, keys);
    fail("unknown key '" + key + "' of a job" +
         (guess.empty() ? "; valid keys are: " + join_words(keys, ", ")
                        : "; did you mean '" + guess + "'?"));
  }
  YAML::Node list = root[jobs];
  if (!list.IsDefined() || !list.IsSequence()) {
    fail("the scenario has no jobs list to set a key in; give jobs=[...] whole");
  }
  if (index != SIZE_MAX && index >= list.size()) {
    fail("job " + std::to_string(index) + " does not exist: the scenario has " +
         std::to_string(list.size()) + " job" + (list.size() == 1 ? "" : "s"));
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (index != SIZE_MAX && i != index) continue;
    YAML::Node item = list[i];
    if (!item.IsMap()) continue;  // the reading says what is wrong with it
    const std::string at = jobs + "[" + std::to_string(i) + "].";
    if (!sub.empty()) {
      YAML::Node section = item[sub];
      if (!section.IsDefined() || section.IsNull()) {
        item[sub] = YAML::Node(YAML::NodeType::Map);
      } else if (!section.IsMap()) {
        fail("cannot set a key under " + at + sub + ": it is " + describe(section) + ", not a map");
      }
      item[sub][key] = value;
      ctx.overrides[at + sub + "." + key] = where;
      continue;
    }
    // A job's servers and its placement policy are two ways to say where it runs: the one
    // set here replaces the other.
    if (key == "servers") item.remove("placement");
    if (key == "placement") item.remove("servers");
    item[key] = value;
    ctx.overrides[at + key] = where;
  }
  return true;
}

}  // namespace fabricsim::config_detail
