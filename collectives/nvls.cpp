#include "collectives/nvls.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/builtin_algorithms.hpp"

namespace fabricsim {

namespace {

int64_t chunks_of(int64_t elems, int64_t chunk_elems) {
  return std::max<int64_t>(1, (elems + chunk_elems - 1) / chunk_elems);
}

}  // namespace

TransferDag nvls_allreduce(int gpus, int64_t count, int elem_bytes, int64_t chunk_bytes,
                           int window) {
  auto fail = [](const char* why) {
    throw std::invalid_argument(std::string("nvls_allreduce: ") + why);
  };
  if (gpus < 2) fail("needs at least 2 GPUs");
  if (count < 0) fail("negative count");
  if (elem_bytes <= 0) fail("elem_bytes must be > 0");
  if (chunk_bytes < elem_bytes) fail("chunk_bytes must be >= elem_bytes");
  if (window < 1) fail("window must be >= 1");
  const int64_t chunk_elems = chunk_bytes / elem_bytes;
  int64_t transfers = 0;
  for (int h = 0; h < gpus; ++h) {
    const int64_t slice = count / gpus + (h < count % gpus ? 1 : 0);
    transfers += chunks_of(slice, chunk_elems) * (gpus + 1);
  }
  if (transfers > std::numeric_limits<uint32_t>::max()) fail("more than 2^32 - 1 transfers");

  TransferDag dag;
  std::vector<uint32_t> stores;  // the head's store of each chunk of the current slice
  for (int h = 0; h < gpus; ++h) {
    const int64_t slice = count / gpus + (h < count % gpus ? 1 : 0);
    const int64_t chunks = chunks_of(slice, chunk_elems);
    const auto flow = static_cast<uint32_t>(h);
    stores.clear();
    for (int64_t k = 0; k < chunks; ++k) {
      const int64_t bytes = std::min(chunk_elems, slice - k * chunk_elems) * elem_bytes;
      const uint32_t first = static_cast<uint32_t>(dag.size());
      for (int i = 0; i < gpus; ++i) {
        const uint32_t id = dag.add_loopback(i, bytes, flow);
        if (k >= window) dag.depends(id, stores[static_cast<size_t>(k - window)]);
      }
      const uint32_t store = dag.add_loopback(h, bytes, flow + static_cast<uint32_t>(gpus));
      for (int i = 0; i < gpus; ++i) dag.depends(store, first + static_cast<uint32_t>(i));
      stores.push_back(store);
    }
  }
  return dag;
}

namespace builtin {

TransferDag nvls_dag(const RankLayout& layout, const CollectiveSpec& spec, int64_t buffer_count,
                     int elem_bytes) {
  if (layout.servers() != 1) {
    throw std::invalid_argument("build_collective: nvls runs within one server");
  }
  const int64_t chunk = spec.chunk_bytes > 0 ? std::max<int64_t>(spec.chunk_bytes, elem_bytes)
                                             : std::max<int64_t>(buffer_count, 1) * elem_bytes;
  return nvls_allreduce(layout.ranks, buffer_count, elem_bytes, chunk, kNvlsWindow);
}

int64_t nvls_transfers(const RankLayout& layout, const CollectiveSpec& spec, int64_t bytes,
                       int elem_bytes) {
  // n slices of ⌈bytes / n / chunk⌉ chunks at most, n + 1 transfers each.
  const int64_t n = layout.ranks;
  const int64_t chunk = std::max<int64_t>(spec.chunk_bytes, elem_bytes);
  return (bytes / (n * chunk) + 1) * n * (n + 1);
}

}  // namespace builtin

}  // namespace fabricsim
