#include "collectives/nccl_tests.hpp"

#include "sim/core/strings.hpp"  // closest_match

#include <algorithm>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace fabricsim {

namespace {

/// "; did you mean 'x'?" for the name `aliases` maps `word` to, or for the candidate
/// closest_match finds; else "".
std::string did_you_mean(
    const std::string& word, const std::vector<std::string>& candidates,
    const std::vector<std::pair<std::string_view, std::string_view>>& aliases = {}) {
  for (const auto& [alias, name] : aliases) {
    if (alias == word) return "; did you mean '" + std::string(name) + "'?";
  }
  const std::string best = closest_match(word, candidates);
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

/// How a collective's GetCollByteCount shapes the buffers (see NcclTestsSize).
enum class Shape { kWhole, kGather, kScatter, kAllToAll };

Shape shape_of(const std::string& collective, const char* who) {
  if (collective == "all_reduce" || collective == "broadcast" || collective == "reduce" ||
      collective == "sendrecv") {
    return Shape::kWhole;
  }
  if (collective == "all_gather") return Shape::kGather;
  if (collective == "reduce_scatter") return Shape::kScatter;
  if (collective == "alltoall") return Shape::kAllToAll;
  throw std::invalid_argument(std::string(who) + ": unknown nccl-tests collective '" + collective +
                              "'" + did_you_mean(collective, nccl_tests_collectives()));
}

/// -o names in src/common.cu test_opnames (mulsum needs NCCL >= 2.11).
const std::vector<std::string>& nccl_tests_ops() {
  static const std::vector<std::string> kOps = {"sum", "prod", "max", "min", "avg", "mulsum"};
  return kOps;
}

}  // namespace

double busbw_factor(const std::string& collective, int ranks) {
  const double n = ranks;
  if (collective == "all_reduce") return 2.0 * (n - 1) / n;
  if (collective == "all_gather" || collective == "reduce_scatter" || collective == "alltoall") {
    return (n - 1) / n;
  }
  if (collective == "broadcast" || collective == "reduce" || collective == "sendrecv") return 1.0;
  throw std::invalid_argument("busbw_factor: unknown collective '" + collective + "'");
}

double algbw_GBps(int64_t size_bytes, int64_t time_ps) {
  if (time_ps <= 0) throw std::invalid_argument("algbw_GBps: time must be > 0");
  // bytes / (ps × 1e-12 s) / 1e9 = bytes × 1000 / ps
  return static_cast<double>(size_bytes) * 1000.0 / static_cast<double>(time_ps);
}

std::vector<int64_t> sweep_sizes(int64_t minbytes, int64_t maxbytes, int64_t stepfactor,
                                 int elem_bytes) {
  if (minbytes <= 0 || maxbytes < minbytes || stepfactor < 2 || elem_bytes <= 0) {
    throw std::invalid_argument("sweep_sizes: need 0 < minbytes <= maxbytes, stepfactor >= 2");
  }
  std::vector<int64_t> sizes;
  for (int64_t s = minbytes; s <= maxbytes; s *= stepfactor) {
    sizes.push_back(s / elem_bytes * elem_bytes);
    if (s > maxbytes / stepfactor) break;  // the next step would pass maxbytes (or overflow)
  }
  return sizes;
}

const std::vector<std::string>& nccl_tests_collectives() {
  static const std::vector<std::string> kCollectives = {
      "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv"};
  return kCollectives;
}

NcclTestsSize nccl_tests_size(const std::string& collective, int64_t requested_bytes,
                              int elem_bytes, int nranks) {
  const Shape shape = shape_of(collective, "nccl_tests_size");
  if (requested_bytes < 0) throw std::invalid_argument("nccl_tests_size: requested_bytes < 0");
  if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 && elem_bytes != 8) {
    throw std::invalid_argument("nccl_tests_size: elem_bytes must be 1, 2, 4 or 8");
  }
  if (nranks < 1) throw std::invalid_argument("nccl_tests_size: nranks must be >= 1");

  const int64_t count = requested_bytes / elem_bytes;
  // (count / n) & -(16 / eltSize): whole 16-byte chunks per rank.
  const int64_t per_chunk = 16 / elem_bytes;
  const int64_t base = count / nranks / per_chunk * per_chunk;
  int64_t send = count, recv = count, param = count;
  switch (shape) {
    case Shape::kWhole:
      break;
    case Shape::kGather:
      send = param = base;
      recv = base * nranks;
      break;
    case Shape::kScatter:
      send = base * nranks;
      recv = param = base;
      break;
    case Shape::kAllToAll:
      send = recv = base * nranks;
      param = base;
      break;
  }
  NcclTestsSize s;
  s.send_bytes = send * elem_bytes;
  s.recv_bytes = recv * elem_bytes;
  s.size_bytes = std::max(s.send_bytes, s.recv_bytes);
  s.count = param;
  return s;
}

std::string nccl_tests_redop(const std::string& collective, const std::string& op) {
  shape_of(collective, "nccl_tests_redop");
  const auto& ops = nccl_tests_ops();
  if (std::find(ops.begin(), ops.end(), op) == ops.end()) {
    throw std::invalid_argument("nccl_tests_redop: unknown nccl-tests op '" + op + "'" +
                                did_you_mean(op, ops));
  }
  if (collective == "all_gather" || collective == "broadcast" || collective == "alltoall") {
    return "none";
  }
  return op;
}

int nccl_tests_root(const std::string& collective, int root) {
  shape_of(collective, "nccl_tests_root");
  if (collective != "broadcast" && collective != "reduce") return -1;
  if (root < 0) throw std::invalid_argument("nccl_tests_root: root must be >= 0");
  return root;
}

const std::vector<std::string>& nccl_tests_types() {
  static const std::vector<std::string> kTypes = {"int8",   "uint8", "int32", "uint32", "int64",
                                                  "uint64", "half",  "float", "double", "bfloat16"};
  return kTypes;
}

int nccl_tests_type_bytes(const std::string& name) {
  static constexpr int kBytes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};  // in nccl_tests_types() order
  const auto& types = nccl_tests_types();
  const auto it = std::find(types.begin(), types.end(), name);
  if (it != types.end()) return kBytes[it - types.begin()];
  // NCCL's enum spellings (ncclFloat32 …) and NCCL 1's names, which nccl-tests does not accept.
  static const std::vector<std::pair<std::string_view, std::string_view>> kSpellings = {
      {"char", "int8"},     {"int", "int32"},  {"float16", "half"},   {"fp16", "half"},
      {"float32", "float"}, {"fp32", "float"}, {"float64", "double"}, {"fp64", "double"},
      {"bf16", "bfloat16"}, {"uint", "uint32"}};
  throw std::invalid_argument("nccl_tests_type_bytes: unknown nccl-tests type '" + name + "'" +
                              did_you_mean(name, types, kSpellings));
}

}  // namespace fabricsim
