// Plausibility checks of the rows of the logs calibration reads (calibration/nccl_log.cpp and
// calibration/perftest.cpp call them): the numbers of a row must agree with each other the way
// the tool computes them, so that an edited, spliced or mistyped log is refused at its line
// instead of fitted.
//
// nccl-tests. Source: NVIDIA nccl-tests src/common.cu (BenchTime: time printed as %7.2f below 100
// us, %7.1f below 10000 us, %7.0f above; algbw and busbw as %6.2f; algbw = size / time / 1e9 with
// time in seconds) and the <Coll>GetBw functions of src/*.cu (busbw = algbw × busbw_factor, see
// collectives/nccl_tests.hpp). Each printed number is rounded to its last printed digit, so a
// check allows half a unit of that digit on each number it uses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fabricsim {

/// The longest time one operation of a plausible log takes, µs: an hour. nccl-tests runs warmup
/// plus iters (5 + 20 by default) calls of every size and perftest thousands of messages, so a
/// row at this bound already means a day-long run; a larger time is a typo or an edit (1e308
/// prints as a number too).
inline constexpr double kMaxLogTimeUs = 3.6e9;

/// The highest rank a plausible log lists ("# Rank N …"), and so its most ranks: a million, as
/// for the "## nodes x GPUs" header (the largest real log in tests/data/nccl has 1440 ranks).
inline constexpr int64_t kMaxNcclRanks = 1'000'000;

/// A column that reads as a number to a person: ASCII digits, or non-ASCII characters (e.g. the
/// full-width digits U+FF10..U+FF19 an input method types) alone or mixed with them, with at
/// least one digit of either kind. The parsers read such a column as a row that must parse,
/// never as noise to skip.
bool numberish(std::string_view column);

/// A column that starts like a number: an ASCII or full-width digit, or a sign or point before
/// an ASCII digit ("0.000", "-5", ".5"). In a table, a line of the table's width whose first
/// columns start so is a row that must parse (a row with its columns swapped or negated).
bool starts_like_number(std::string_view column);

/// " (non-ASCII characters; expected ASCII digits 0-9)" when `column` has a byte >= 0x80, else
/// "": the end of a "cannot read" message.
std::string non_ascii_hint(std::string_view column);

/// Half a unit of the last digit `printed` shows: "14.79" -> 0.005, "2156.8" -> 0.05, "11469"
/// -> 0.5, "5e-07" -> 5e-08 (half a unit of the mantissa's last digit times the exponent).
double half_last_digit(const std::string& printed);

/// One block (out-of-place or in-place) of a row as printed and as read.
struct NcclBlockText {
  std::string time, algbw, busbw;  ///< the columns as printed
  double time_us = 0, algbw_GBps = 0, busbw_GBps = 0;
};

/// Checks a block's time and algbw against the row's size. Throws ParseError at `line` of
/// `path` ("`which` time …") when the time is not positive or above kMaxLogTimeUs, when
/// algbw or busbw is negative, or when algbw is not size / time within the rounding of the
/// printed time and algbw.
void check_nccl_time_and_algbw(const std::string& path, int line, const std::string& which,
                               int64_t size_bytes, const NcclBlockText& block);

/// Checks a block's busbw against algbw × busbw_factor(collective, nranks). Throws ParseError
/// at `line` of `path` when they differ by more than the rounding of the printed algbw and
/// busbw; the message gives both numbers, says where the rank count came from
/// (`nranks_source`, e.g. "the device list (Rank 143 at line 12)") and, for all_reduce,
/// all_gather, reduce_scatter and alltoall, the rank count busbw / algbw implies.
void check_nccl_busbw(const std::string& path, int line, const std::string& which,
                      const std::string& collective, int nranks, const std::string& nranks_source,
                      const NcclBlockText& block);

/// One row of a perftest latency table as read, µs; NaN for a column the table lacks.
struct PerftestLatencyText {
  double t_min_us, t_max_us, t_typical_us, t_avg_us, p99_us, p99_9_us;
};

/// Checks that a perftest latency row's statistics of one sample set are ordered: t_min <=
/// t_typical, t_avg, p99 <= p99.9 <= t_max, t_typical <= p99 (the median below the 99th
/// percentile), within the 0.01 µs perftest prints, and that t_max is at most kMaxLogTimeUs.
/// Throws ParseError at `line` of `path` naming both columns.
void check_perftest_latency(const std::string& path, int line, const PerftestLatencyText& row);

/// Checks a perftest BW row's MsgRate[Mpps] against its BW average: perftest prints
/// MsgRate = BW average × `scale_Bps` / bytes / 10^6, where `bw_avg_text` is the BW average as
/// printed (in the table's unit, `scale_Bps` bytes per second each) and `msg_rate_text` the
/// message rate as printed. Throws ParseError at `line` of `path` when they differ by more than
/// the rounding of both.
void check_perftest_msg_rate(const std::string& path, int line, int64_t bytes,
                             const std::string& bw_avg_text, double scale_Bps,
                             const std::string& msg_rate_text);

}  // namespace fabricsim
