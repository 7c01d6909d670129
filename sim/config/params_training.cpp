// The `training:` section: one training step of a data/tensor/pipeline-parallel model
// (TrainingConfig, TrainingLayer; scenario.hpp), its keys and its layers' keys as tables, read
// into the step with layer times from FLOPs resolved here.
#include "sim/config/loader_detail.hpp"

namespace fabricsim::config_detail {

namespace {

/// A training layer's compute time: up to an hour of simulated time.
const QuantitySpec kLayerTime{
    "time", "1.5ms", parse_time_ps, 0, 3'600'000'000'000'000, "a time from 0s to 3600s"};

}  // namespace

// clang-format off
std::span<const ItemKey<TrainingConfig>> training_keys() {
  using T = TrainingConfig;
  static const ItemKey<T> rows[] = {
  {"dp", false, Int(1, 1 << 20), own<&T::dp>, "data-parallel replicas; 0 = the fabric's GPUs / (tp x pp)"},
  {"tp", false, Int(1, 1024), own<&T::tp>, "tensor-parallel ranks"},
  {"pp", false, Int(1, 1024), own<&T::pp>, "pipeline stages"},
  {"microbatches", false, Int(1, 4096), own<&T::microbatches>, "microbatches per step"},
  {"bucket_cap", false, Quantity(kPositiveSize), own<&T::bucket_cap_bytes>, "DDP bucket_cap_mb"},
  {"first_bucket_cap", false, Quantity(kPositiveSize), own<&T::first_bucket_cap_bytes>,
   "DDP first_bucket_bytes_cap"},
  {"optimizer_time", false, Quantity(kLayerTime), own<&T::optimizer_ps>, "optimizer step after the gradients"},
  {"gpu_peak_flops", false, PositiveNumber("a peak in FLOP/s, e.g. 989e12 (H100 dense BF16)"),
   own<&T::gpu_peak_flops>, "FLOP/s, for layers given in FLOPs"},
  {"efficiency", false, Fraction(1e-6, 1, "a fraction of the peak from 0 to 1, e.g. 0.4"),
   own<&T::efficiency>, "fraction of the peak that layers given in FLOPs reach"},
  {"layers", true, Custom("list of layers", "1 to 100000 layers (training.layers[] keys)"),
   own<&T::layers>, "the model's layers per microbatch on one GPU", nullptr, true},
  };
  return rows;
}

std::span<const ItemKey<TrainingLayer>> layer_keys() {
  using T = TrainingLayer;
  static const ItemKey<T> rows[] = {
  {"name", false, String(), own<&T::name>, "name in reports; left out = layer<index>"},
  {"count", false, Int(1, 100000), own<&T::count>, "identical layers this entry stands for"},
  {"fwd_time", true, Quantity(kLayerTime), own<&T::fwd_ps>, "forward time (or fwd_flops)", nullptr, true},
  {"bwd_time", false, Quantity(kLayerTime), own<&T::bwd_ps>,
   "backward time (or bwd_flops); left out = 2 x forward", nullptr, true},
  {"fwd_flops", false, PositiveNumber("a number of FLOPs, e.g. 2.4e12"), nullptr,
   "forward FLOPs, at training.gpu_peak_flops x efficiency", nullptr, true},
  {"bwd_flops", false, PositiveNumber("a number of FLOPs, e.g. 2.4e12"), nullptr,
   "backward FLOPs, at training.gpu_peak_flops x efficiency", nullptr, true},
  {"params", false, Quantity(kNonNegativeSize), own<&T::param_bytes>, "gradient bytes per GPU (DDP buckets)"},
  {"tp_comm", false, Quantity(kNonNegativeSize), own<&T::tp_comm_bytes>,
   "TP AllReduce after forward and after backward"},
  {"activations", false, Quantity(kNonNegativeSize), own<&T::activation_bytes>,
   "sent at a pipeline stage boundary after this layer"},
  };
  return rows;
}
// clang-format on

const std::vector<std::string>& training_key_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const ItemKey<TrainingConfig>& k : training_keys()) out.emplace_back(k.key);
    return out;
  }();
  return names;
}

/// `training:` (the section's value) into s.training; layer times from FLOPs resolved here.
void parse_training(const Context& ctx, const Value& section, Scenario& s,
                    const std::string& path) {
  const std::string example =
      "e.g. {dp: 16, layers: [{name: block, count: 24, fwd_time: 1ms, params: 50MiB}]}";
  if (!section.node().IsMap()) {
    section.fail("expected a map of training keys, " + example + ", got " +
                 describe(section.node()));
  }
  TrainingConfig& t = s.training;
  t.enabled = true;
  const std::vector<std::string>& keys = training_key_names();
  const auto given = map_keys(ctx, section, path, keys, "training");
  for (const auto& [name, v] : given) s.origins[v.path()] = v.origin();
  const auto get = [&](const char* k) -> const Value* {
    const auto it = given.find(k);
    return it == given.end() ? nullptr : &it->second;
  };
  for (const ItemKey<TrainingConfig>& k : training_keys()) {
    if (k.read_apart) continue;  // layers, below
    if (const Value* v = get(k.key)) read_item(k, *v, t);
  }
  const Value* layers = get("layers");
  if (layers == nullptr) {
    ctx.fail(path + ".layers", section.node().Mark(),
             "missing required key; a training step needs its layers, " + example);
  }
  std::vector<std::string> layer_key_names;
  for (const ItemKey<TrainingLayer>& k : layer_keys()) layer_key_names.emplace_back(k.key);
  for (const Value& item : layers->items("a list of layers, " + example, 1, 100000)) {
    if (!item.node().IsMap()) {
      item.fail("expected a layer: a map with " + join_words(layer_key_names, ", ") + ", got " +
                describe(item.node()));
    }
    const auto lk = map_keys(ctx, item, item.path(), layer_key_names, "a layer");
    for (const auto& [name, v] : lk) s.origins[v.path()] = v.origin();
    const auto at = [&](const char* k) -> const Value* {
      const auto it = lk.find(k);
      return it == lk.end() ? nullptr : &it->second;
    };
    TrainingLayer layer;
    for (const ItemKey<TrainingLayer>& k : layer_keys()) {
      if (k.read_apart) continue;  // forward and backward, below
      if (const Value* v = at(k.key)) read_item(k, *v, layer);
    }
    if (!at("name")) layer.name = "layer" + std::to_string(t.layers.size());
    // Forward and backward: a time, or FLOPs at the GPU's peak × efficiency.
    const auto from_flops = [&](const Value& v) {
      const double flops = flops_number(v, "a number of FLOPs, e.g. 2.4e12");
      if (t.gpu_peak_flops <= 0 || t.efficiency <= 0) {
        v.fail(
            "a layer in FLOPs needs training.gpu_peak_flops and training.efficiency (the "
            "time is FLOPs / (peak x efficiency)); give both, or fwd_time/bwd_time");
      }
      const double ps = flops / (t.gpu_peak_flops * t.efficiency) * 1e12;
      if (ps > 3.6e15) v.fail("that is more than an hour of compute for one layer");
      return static_cast<int64_t>(std::llround(ps));
    };
    const Value* ft = at("fwd_time");
    const Value* ff = at("fwd_flops");
    if (ft && ff) ff->fail("give fwd_time or fwd_flops, not both");
    if (!ft && !ff) {
      ctx.fail(item.path() + ".fwd_time", item.node().Mark(),
               "missing required key; a layer needs fwd_time (or fwd_flops)");
    }
    layer.fwd_ps = ft ? ft->quantity(kLayerTime) : from_flops(*ff);
    const Value* bt = at("bwd_time");
    const Value* bf = at("bwd_flops");
    if (bt && bf) bf->fail("give bwd_time or bwd_flops, not both");
    layer.bwd_ps = bt ? bt->quantity(kLayerTime) : bf ? from_flops(*bf) : 2 * layer.fwd_ps;
    s.origins[item.path()] = item.origin();
    t.layers.push_back(std::move(layer));
  }
  // One GPU's compute in the step (every layer, every microbatch) must fit simulated time: at
  // most a day, far below int64 picoseconds (106 days).
  double per_gpu_ps = static_cast<double>(t.optimizer_ps);
  for (const TrainingLayer& l : t.layers) {
    per_gpu_ps += static_cast<double>(t.microbatches) * l.count *
                  (static_cast<double>(l.fwd_ps) + static_cast<double>(l.bwd_ps));
  }
  if (per_gpu_ps > 86'400e12) {
    layers->fail("one GPU's compute in the step would be " +
                 std::to_string(static_cast<int64_t>(per_gpu_ps / 1e12)) +
                 " s (microbatches x layers x (fwd + bwd)); expected at most a day");
  }
}

}  // namespace fabricsim::config_detail
