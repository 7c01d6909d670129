#include "calibration/holdout.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <system_error>

#include "sim/config/loader.hpp"
#include "sim/core/units.hpp"

namespace fabricsim {

Holdout parse_holdout(const std::string& text, const std::vector<std::string>& nccl_tests) {
  Holdout h;
  int64_t& heldout_from = h.from;
  int& heldout_largest = h.largest;  ///< --holdout largest=N
  std::string& heldout_file = h.file;
  if (!text.empty()) {
    const size_t eq = text.find('=');
    const std::string kind = text.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : text.substr(eq + 1);
    if (kind == "above" && !value.empty()) {
      try {
        heldout_from = parse_size_bytes(value);
      } catch (const std::exception& e) {
        throw ConfigError("--holdout " + text, 0, 0, "--holdout", e.what());
      }
      if (heldout_from <= 0) {  // 0 is "nothing held out" inside: above=0B was silent
        throw ConfigError("--holdout " + text, 0, 0, "--holdout",
                          "expected above=SIZE with a SIZE above 0B (the sizes from SIZE up are "
                          "held out, e.g. above=64MiB), got '" +
                              value + "'");
      }
    } else if (kind == "largest" && !value.empty()) {
      if (value.find_first_not_of("0123456789") != std::string::npos || value.size() > 6 ||
          std::stoi(value) < 1) {
        throw ConfigError("--holdout " + text, 0, 0, "--holdout",
                          "expected largest=N with N a whole number >= 1 (the N largest sizes of "
                          "each log are held out), got '" +
                              value + "'");
      }
      heldout_largest = std::stoi(value);
    } else if (kind == "file" && !value.empty()) {
      const auto same = [&](const std::string& a) {
        std::error_code e1, e2;
        return std::filesystem::weakly_canonical(a, e1) ==
               std::filesystem::weakly_canonical(value, e2);
      };
      if (std::count_if(nccl_tests.begin(), nccl_tests.end(), same) != 1) {
        throw ConfigError("--holdout " + text, 0, 0, "--holdout",
                          "the held-out file must be exactly one of the --nccl-tests logs");
      }
      if (nccl_tests.size() < 2) {
        throw ConfigError("--holdout " + text, 0, 0, "--holdout",
                          "holding out the only --nccl-tests log leaves nothing to fit");
      }
      heldout_file = *std::find_if(nccl_tests.begin(), nccl_tests.end(), same);
    } else {
      throw ConfigError("--holdout " + text, 0, 0, "--holdout",
                        "expected above=SIZE (e.g. above=64MiB), largest=N (e.g. largest=4) or "
                        "file=PATH");
    }
  }
  return h;
}

int64_t Holdout::first_heldout(const NcclLog& log, int64_t cap) const {
  const int64_t heldout_from = from;
  const int heldout_largest = largest;
  if (heldout_largest == 0) return heldout_from;
  std::vector<int64_t> sizes;
  for (const auto& [bytes, row] : rows_by_size(log)) {
    if (bytes <= cap) sizes.push_back(bytes);
  }
  if (sizes.empty()) return 0;
  return sizes[sizes.size() - std::min<size_t>(sizes.size(), heldout_largest)];
}

/// The log's out-of-place rows by size.
std::map<int64_t, const NcclLogRow*> rows_by_size(const NcclLog& log) {
  std::map<int64_t, const NcclLogRow*> m;
  for (const NcclLogRow& r : log.rows) {
    if (r.oop_time_us > 0 && r.size_bytes > 0) m.emplace(r.size_bytes, &r);
  }
  return m;
}

}  // namespace fabricsim
