// `fabricsim calibrate --holdout`: which sizes or which log the fits leave out, to predict them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "calibration/nccl_log.hpp"

namespace fabricsim {

/// --holdout: above=SIZE, largest=N or file=PATH (at most one is set; all empty: none).
struct Holdout {
  int64_t from = 0;  ///< above=SIZE: every size >= from is held out (0 = not given)
  int largest = 0;   ///< largest=N: each log's N largest sizes are held out (0 = not given)
  std::string file;  ///< file=PATH: that --nccl-tests log (as given) is held out and predicted

  /// The first held-out size of `log` (0 = none): `from`, or its N-th largest size (among
  /// those up to `cap`) with largest=N.
  int64_t first_heldout(const NcclLog& log, int64_t cap) const;
};

/// Parses --holdout `text` ("" = none). `nccl_tests`: the --nccl-tests logs, one of which
/// file=PATH must name. Throws ConfigError naming --holdout (exit 2) for a form it does not
/// know, a SIZE not above 0B, an N not a whole number >= 1, or a file that is not exactly one
/// of the logs, or the only one.
Holdout parse_holdout(const std::string& text, const std::vector<std::string>& nccl_tests);

/// The log's out-of-place rows by size.
std::map<int64_t, const NcclLogRow*> rows_by_size(const NcclLog& log);

}  // namespace fabricsim
