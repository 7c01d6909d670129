// NCCL's NVLS AllReduce (NVLink SHARP) inside one NVSwitch server, as a transfer DAG.
//
// What NCCL runs (NCCL 2.20 src/device/all_reduce.h, RunWorkElement<ncclFuncAllReduce, ...,
// NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE>, one node): the buffer is cut into one slice per GPU, the
// slice's "head"; each GPU's scatter warps copy its slices into its own memory bound to the
// multicast object (no NVLink traffic); the head's reduce warps then load its slice through the
// multicast address with multimem.ld_reduce (the NVSwitch reads the slice from every GPU, itself
// included, adds them up and returns the sum to the head) and store the sum back with
// multimem.st (the head sends it once, the NVSwitch writes it to every GPU, the head included);
// the gather warps copy the result out locally. So for a slice chunk of b bytes with head h,
// every GPU's NVLink carries b up (its contribution) and b down (the multicast copy), and the
// head's carries b more each way (the store up, the sum down): per GPU (n + 1) / n of the
// buffer in each direction, against 2(n − 1) / n for Ring.
//
// How it is modelled: the NVSwitch reduces and multicasts, so no byte goes from one GPU to
// another; every byte a GPU sends to the switch and every byte the switch delivers to it is a
// loopback transfer on that GPU (TransferDag::add_loopback: up its NVLink to the NVSwitch and
// back). Per chunk k of slice h (b bytes):
//   - one loopback of b on every GPU i: i's contribution up and the multicast copy it gets down
//     (on the head: its contribution and the sum the NVSwitch returns it);
//   - one more loopback of b on the head, after all of those: the store up and the head's own
//     multicast copy down. Waiting for every contribution is the NVSwitch's reduction.
// The per-GPU NVLink load in each direction is then exactly NVLS's; the time of the down half
// of a non-head GPU's loopback is earlier than the real multicast copy's (it follows its
// contribution by one NVSwitch hop instead of waiting for the store), which moves no byte
// between links.
//
// Transfer ids: slice-major, then chunk; chunk k of slice h owns n + 1 consecutive ids: the
// loopback of GPU 0 … n − 1, then the head's store. A contribution's flow is its slice h, a
// store's n + h: NCCL issues the stores from the reduce warps, not behind the scatter warps'
// copies, so on the head's NVLink a store shares the link with the contributions queued there
// rather than waiting behind them (one queue pair each). Chunk k of a slice waits for the store of
// chunk k − window of the same slice (the slots NCCL's buffers give a head: NCCL_NVLS_NCHANNELS
// channels of NCCL_STEPS slots).
#pragma once

#include <cstdint>

#include "collectives/transfer_dag.hpp"

namespace fabricsim {

/// NVLS AllReduce of `count` elements of `elem_bytes` over `gpus` GPUs of one NVSwitch server
/// (ranks 0 … gpus − 1), as above. Slice h holds count / gpus elements plus one for the first
/// count % gpus slices; each slice is cut into chunks of E = ⌊chunk_bytes / elem_bytes⌋
/// elements, the last shorter: max(1, ⌈slice / E⌉) chunks. Total loopback bytes: (n + 1) ×
/// count × elem_bytes (each GPU (n + 1)/n of the buffer, up and down). Critical path: 2
/// transfers per chunk of a slice, ⌈chunks / window⌉ chunk groups after each other.
/// Throws std::invalid_argument for gpus < 2, count < 0, elem_bytes <= 0,
/// chunk_bytes < elem_bytes, window < 1, or a DAG of more than 2^32 − 1 transfers.
TransferDag nvls_allreduce(int gpus, int64_t count, int elem_bytes, int64_t chunk_bytes,
                           int window);

/// NVLS's framing (CollectiveSpec line sizes): 6 bytes on the NVLink per 5 of payload, so that
/// NVLS reaches 5/6 of the NVLink bandwidth: NCCL's tuning.cc (2.20.3) takes NVLS's algorithm
/// bandwidth as its graph's bandwidth × 5/6, and measured 8 × H100 algbw (~273-275 GB/s:
/// NCCL issue #1455, nccl-tests issue #212) is 0.83 of the (n + 1)/n NVLink bound at 370.8 GB/s.
inline constexpr int kNvlsLineBytes = 6;
inline constexpr int kNvlsLineDataBytes = 5;

/// The chunks NCCL's NVLS window allows in flight per slice: NCCL_NVLS_NCHANNELS (16) channels
/// × NCCL_STEPS (8) slots.
inline constexpr int kNvlsWindow = 16 * kConnectionWindow;

}  // namespace fabricsim
