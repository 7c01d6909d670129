#include <stdexcept>

#include "collectives/transfer_dag.hpp"

namespace fabricsim {

TransferDag ring_allreduce(int ranks, int64_t count, int elem_bytes) {
  if (ranks < 2) throw std::invalid_argument("ring_allreduce: needs at least 2 ranks");
  if (count < 0 || elem_bytes <= 0) throw std::invalid_argument("ring_allreduce: bad buffer");
  // Chunk c holds count/N elements, plus one for the first count%N chunks.
  auto chunk_bytes = [&](int c) {
    const int64_t base = count / ranks, extra = count % ranks;
    return (base + (c < extra ? 1 : 0)) * elem_bytes;
  };
  TransferDag dag;
  const int steps = 2 * (ranks - 1);
  for (int s = 0; s < steps; ++s) {
    for (int r = 0; r < ranks; ++r) {
      // Reduce-scatter step s: rank r sends chunk (r − s) mod N; all-gather continues the rotation.
      const int chunk = ((r - s) % ranks + ranks) % ranks;
      const uint32_t id = dag.add(r, (r + 1) % ranks, chunk_bytes(chunk));
      if (s > 0) dag.depends(id, static_cast<uint32_t>((s - 1) * ranks + (r - 1 + ranks) % ranks));
    }
  }
  return dag;
}

}  // namespace fabricsim
