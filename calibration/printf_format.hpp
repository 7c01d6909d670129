// One number formatted as printf would: the calibration reports' values and reasons.
#pragma once

#include <cstdio>
#include <string>

namespace fabricsim {

/// `v` formatted by the printf conversion `format` (one double conversion, e.g. "%.3g"); the
/// result is cut at 63 characters.
inline std::string printf_format(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace fabricsim
