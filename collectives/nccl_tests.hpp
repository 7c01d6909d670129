// nccl-tests conventions: the size sweep, the columns of its table and the algbw/busbw definitions.
//
// Source: NVIDIA nccl-tests, doc/PERFORMANCE.md ("algbw" and "busbw"), src/common.cu (the
// -b/-e/-f sweep, setupArgs, TimeTest's row header, BenchTime's number formats, the type and op
// names), and one <collective>GetCollByteCount per collective in src/all_reduce.cu,
// src/all_gather.cu, src/reduce_scatter.cu, src/broadcast.cu, src/reduce.cu, src/alltoall.cu and
// src/sendrecv.cu. GB/s means 10⁹ bytes per second, as nccl-tests prints it.
//
// One row of the table nccl-tests prints per size (13 columns):
//   size  count  type  redop  root  | time algbw busbw #wrong (out-of-place) | same (in-place)
// with size in bytes, count in elements, time in µs and algbw/busbw in GB/s.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim {

/// nccl-tests' bus bandwidth factor for `collective` on `ranks` ranks: busbw = algbw × factor.
///   all_reduce 2(n−1)/n; all_gather, reduce_scatter, alltoall (n−1)/n; broadcast, reduce,
///   sendrecv 1. Throws std::invalid_argument for an unknown collective name.
/// Note: src/all_reduce.cu (nccl-tests 03a204a) uses (n−1)/(n+1) instead when the environment
/// sets NCCL_ALGO to exactly "NVLS" or "NVLSTREE"; this function gives the default, which
/// fabricsim prints for every algorithm, NVLS included (every log in tests/data/nccl/ uses it,
/// and so do the NVLS measurements the NVLS tests compare with).
double busbw_factor(const std::string& collective, int ranks);

/// algbw in GB/s (10⁹ B/s): size_bytes / time. Throws std::invalid_argument if time_ps <= 0.
/// For every collective nccl-tests' algbw is the printed size column over the time (see
/// NcclTestsSize::size_bytes), so this takes that size.
double algbw_GBps(int64_t size_bytes, int64_t time_ps);

/// The sizes nccl-tests visits for -b minbytes -e maxbytes -f stepfactor: minbytes,
/// minbytes×f, … while <= maxbytes, each rounded down to a whole number of elements of
/// `elem_bytes`. Throws std::invalid_argument for minbytes <= 0, maxbytes < minbytes,
/// stepfactor < 2 or elem_bytes <= 0.
std::vector<int64_t> sweep_sizes(int64_t minbytes, int64_t maxbytes, int64_t stepfactor,
                                 int elem_bytes);

/// The collective names nccl-tests' binaries carry (<name>_perf), in the order all_reduce,
/// all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv.
const std::vector<std::string>& nccl_tests_collectives();

/// What nccl-tests does with one requested size (a -b/-e/-f sweep point) for one collective.
///
/// src/common.cu setupArgs: count = requested_bytes / elem_bytes (whole elements), then the
/// collective's GetCollByteCount gives sendcount, recvcount and paramcount (the count passed to
/// the NCCL call) per rank:
///   all_reduce, broadcast, reduce, sendrecv: send = recv = param = count.
///   all_gather:     base = (count / n) rounded down to a multiple of 16 bytes' worth of elements
///                   (`& -(16/eltSize)`); send = param = base, recv = base × n.
///   reduce_scatter: same base; send = base × n, recv = param = base.
///   alltoall:       same base (per peer); send = recv = base × n, param = base.
/// TimeTest then prints max(sendBytes, expectedBytes) in the size column and nbytes / wordSize
/// (= paramcount) in the count column. So a size below 16 × n bytes prints as 0 for all_gather,
/// reduce_scatter and alltoall (tests/data/nccl/nccl-allgather-b200-2x1-gcp-a4-roce-gib-01.txt:
/// -b 8 prints two rows of size 0, then 32). Older nccl-tests releases divided by n without the
/// 16-byte alignment (e.g. src/all_gather.cu at commit 0f8c785); this follows the current one,
/// which every log in tests/data/nccl/ agrees with.
struct NcclTestsSize {
  int64_t size_bytes = 0;  ///< the size column: max(send_bytes, recv_bytes)
  int64_t count = 0;       ///< the count column: elements per NCCL call per rank (paramcount)
  int64_t send_bytes = 0;  ///< send buffer bytes used per rank
  int64_t recv_bytes = 0;  ///< receive (expected) buffer bytes used per rank
};

/// The row nccl-tests prints for `requested_bytes` of `collective` with elements of
/// `elem_bytes` (1, 2, 4 or 8) on `nranks` ranks; see NcclTestsSize. Throws
/// std::invalid_argument for an unknown collective (with a "did you mean"), requested_bytes < 0,
/// elem_bytes not 1/2/4/8, or nranks < 1.
NcclTestsSize nccl_tests_size(const std::string& collective, int64_t requested_bytes,
                              int elem_bytes, int nranks);

/// The redop column for reduction `op` (-o: sum, prod, max, min, avg, mulsum): the op's name for
/// all_reduce, reduce_scatter, reduce and also sendrecv (src/sendrecv.cu passes the op name
/// through although it reduces nothing); "none" for all_gather, broadcast and alltoall. Throws
/// std::invalid_argument for an unknown collective or op (with a "did you mean").
std::string nccl_tests_redop(const std::string& collective, const std::string& op);

/// The root column for -r `root`: `root` for broadcast and reduce, -1 for every other collective.
/// Throws std::invalid_argument for an unknown collective, or a negative root for broadcast or
/// reduce (nccl-tests' "-r all" loops over every root; give each root separately).
int nccl_tests_root(const std::string& collective, int root);

/// The -d type names nccl-tests accepts, in its order (src/common.cu test_typenames for NCCL >= 2):
/// int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16.
const std::vector<std::string>& nccl_tests_types();

/// Bytes per element of nccl-tests type `name` (src/common.h wordSize). nccl-tests matches the
/// names exactly and accepts no aliases (ncclstringtotype; NCCL's own spellings such as float32,
/// float16 or int, and NCCL 1's char, are not accepted: nccl-tests prints "invalid type" and runs
/// float). Throws std::invalid_argument for any other name, with a "did you mean" that also maps
/// those NCCL spellings to nccl-tests' names (float32 -> float).
int nccl_tests_type_bytes(const std::string& name);

}  // namespace fabricsim
