// Small helpers shared by the calibration's printed tables and its report (FILE.report.json).
#pragma once

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "calibration/calibrate.hpp"

namespace fabricsim::calibration_text {

using ordered_json = nlohmann::ordered_json;

/// "%.2f" of `v`: the tables' numbers.
inline std::string f2(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

/// {"value": v, "ci95": half-width or null when unknown}.
inline ordered_json estimate_json(const Estimate& e) {
  return {{"value", e.value},
          {"ci95", std::isnan(e.ci95) ? ordered_json(nullptr) : ordered_json(e.ci95)}};
}

/// The value, or null.
inline ordered_json optional_json(const std::optional<double>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}

}  // namespace fabricsim::calibration_text
