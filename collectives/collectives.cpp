#include "collectives/collectives.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fabricsim {

namespace {

void check_buffer(const char* who, int ranks, int64_t count, int elem_bytes) {
  if (ranks < 2) throw std::invalid_argument(std::string(who) + ": needs at least 2 ranks");
  if (count < 0) throw std::invalid_argument(std::string(who) + ": negative count");
  if (elem_bytes <= 0) throw std::invalid_argument(std::string(who) + ": elem_bytes must be > 0");
}

// Bytes of pieces [first, last) of `count` elements cut into `pieces` (see the header).
int64_t piece_bytes(int64_t count, int elem_bytes, int pieces, int first, int last) {
  const int64_t base = count / pieces, extra = count % pieces;
  int64_t elems = 0;
  for (int i = first; i < last; ++i) elems += base + (i < extra ? 1 : 0);
  return elems * elem_bytes;
}

int mod(int a, int n) {
  return ((a % n) + n) % n;
}

// N−1 ring steps; step s of rank r sends piece (r − s) mod N and waits for step s−1 of r−1.
TransferDag ring_rotation(int ranks, int64_t count, int elem_bytes) {
  TransferDag dag;
  for (int s = 0; s < ranks - 1; ++s) {
    for (int r = 0; r < ranks; ++r) {
      const int piece = mod(r - s, ranks);
      const uint32_t id =
          dag.add(r, (r + 1) % ranks, piece_bytes(count, elem_bytes, ranks, piece, piece + 1));
      if (s > 0) dag.depends(id, static_cast<uint32_t>((s - 1) * ranks + mod(r - 1, ranks)));
    }
  }
  return dag;
}

// Chunk k on hop h (id k × (N−1) + h) from rank first+h to first+h+1.
TransferDag chain(const char* who, int ranks, int64_t count, int elem_bytes, int root, int chunks,
                  int first) {
  check_buffer(who, ranks, count, elem_bytes);
  if (root < 0 || root >= ranks) throw std::invalid_argument(std::string(who) + ": bad root");
  if (chunks < 1) throw std::invalid_argument(std::string(who) + ": chunks must be >= 1");
  TransferDag dag;
  const int hops = ranks - 1;
  for (int k = 0; k < chunks; ++k) {
    const int64_t bytes = piece_bytes(count, elem_bytes, chunks, k, k + 1);
    for (int h = 0; h < hops; ++h) {
      const uint32_t id = dag.add(mod(first + h, ranks), mod(first + h + 1, ranks), bytes);
      if (h > 0) dag.depends(id, id - 1);
      if (k >= kConnectionWindow) {
        // The slot chunk k - W took at the receiver is free once the receiver has forwarded
        // that chunk on the next hop, or, at the chain's end, once it has arrived.
        const uint32_t earlier = id - static_cast<uint32_t>(kConnectionWindow * hops);
        if (h + 1 < hops) {
          dag.depends_on_post(id, earlier + 1);
        } else {
          dag.depends(id, earlier);
        }
      }
    }
  }
  return dag;
}

}  // namespace

TransferDag ring_allgather(int ranks, int64_t count, int elem_bytes) {
  check_buffer("ring_allgather", ranks, count, elem_bytes);
  return ring_rotation(ranks, count, elem_bytes);
}

TransferDag ring_reducescatter(int ranks, int64_t count, int elem_bytes) {
  check_buffer("ring_reducescatter", ranks, count, elem_bytes);
  return ring_rotation(ranks, count, elem_bytes);
}

TransferDag ring_broadcast(int ranks, int64_t count, int elem_bytes, int root, int chunks) {
  return chain("ring_broadcast", ranks, count, elem_bytes, root, chunks, root);
}

TransferDag ring_reduce(int ranks, int64_t count, int elem_bytes, int root, int chunks) {
  return chain("ring_reduce", ranks, count, elem_bytes, root, chunks, root + 1);
}

TransferDag alltoall(int ranks, int64_t count, int elem_bytes) {
  check_buffer("alltoall", ranks, count, elem_bytes);
  TransferDag dag;
  for (int r = 0; r < ranks; ++r) {
    for (int d = 1; d < ranks; ++d) {
      const int peer = (r + d) % ranks;
      dag.add(r, peer, piece_bytes(count, elem_bytes, ranks, peer, peer + 1));
    }
  }
  return dag;
}

TransferDag sendrecv(int ranks, int64_t count, int elem_bytes) {
  check_buffer("sendrecv", ranks, count, elem_bytes);
  TransferDag dag;
  for (int r = 0; r < ranks; ++r) dag.add(r, (r + 1) % ranks, count * elem_bytes);
  return dag;
}

HalvingDoublingPlan halving_doubling_allreduce_plan(int ranks, int64_t count, int elem_bytes) {
  check_buffer("halving_doubling_allreduce", ranks, count, elem_bytes);
  int p = 1;
  while (p * 2 <= ranks) p *= 2;
  const int extra = ranks - p;
  auto real = [&](int q) { return q < extra ? 2 * q + 1 : q + extra; };

  HalvingDoublingPlan plan;
  plan.pieces = p;
  auto add = [&](int src, int dst, int first, int last, bool reduce) {
    plan.spans.push_back(PieceSpan{first, last, reduce});
    return plan.dag.add(src, dst, piece_bytes(count, elem_bytes, p, first, last));
  };
  constexpr uint32_t kNone = ~uint32_t{0};
  // last_recv[q]: the transfer that last delivered data to virtual rank q.
  // last_send[q]: q's previous send, which itself waited for every earlier receive of q, so
  // depending on it as well keeps data received two or more steps back in the sent range.
  std::vector<uint32_t> last_recv(p, kNone), last_send(p, kNone);
  for (int e = 0; e < extra; ++e) last_recv[e] = add(2 * e, 2 * e + 1, 0, p, true);

  // lo[q], hi[q]: the piece range q holds (reduce-scatter) or has gathered (all-gather).
  std::vector<int> lo(p, 0), hi(p, p);
  auto step = [&](int distance, bool halving) {
    std::vector<uint32_t> recv(p, kNone);
    std::vector<int> new_lo(lo), new_hi(hi);
    for (int q = 0; q < p; ++q) {
      const int peer = q ^ distance;
      int first = lo[q], last = hi[q];
      if (halving) {
        // Keep the half on our side of the peer, send the other one.
        const int mid = (lo[q] + hi[q]) / 2;
        if (q < peer) {
          first = mid;
          new_hi[q] = mid;
        } else {
          last = mid;
          new_lo[q] = mid;
        }
      } else {
        new_lo[q] = std::min(lo[q], lo[peer]);
        new_hi[q] = std::max(hi[q], hi[peer]);
      }
      const uint32_t id = add(real(q), real(peer), first, last, halving);
      if (last_recv[q] != kNone) plan.dag.depends(id, last_recv[q]);
      if (last_send[q] != kNone) plan.dag.depends(id, last_send[q]);
      // MPI_Sendrecv pairs: the peer takes the data once it has its own previous receive
      // (a large message waits for the receiver, MPI's rendezvous protocol).
      if (last_recv[peer] != kNone && last_recv[peer] != last_send[q]) {
        plan.dag.depends(id, last_recv[peer]);
      }
      last_send[q] = id;
      recv[peer] = id;
    }
    last_recv = recv;
    lo = new_lo;
    hi = new_hi;
  };
  for (int distance = p / 2; distance >= 1; distance /= 2) step(distance, true);
  for (int distance = 1; distance < p; distance *= 2) step(distance, false);

  for (int e = 0; e < extra; ++e) {
    const uint32_t id = add(2 * e + 1, 2 * e, 0, p, false);
    plan.dag.depends(id, last_recv[e]);
    plan.dag.depends(id, last_send[e]);
  }
  return plan;
}

TransferDag halving_doubling_allreduce(int ranks, int64_t count, int elem_bytes) {
  return halving_doubling_allreduce_plan(ranks, count, elem_bytes).dag;
}

}  // namespace fabricsim
