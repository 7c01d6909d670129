// libFuzzer target: the units parser (rates, times, sizes), sim/core/units.hpp.
// Bad text must end in a UnitError (the CLI's exit 2); anything else escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sim/core/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)fabricsim::parse_rate_bps(text);
  } catch (const fabricsim::UnitError&) {
  }
  try {
    (void)fabricsim::parse_time_ps(text);
  } catch (const fabricsim::UnitError&) {
  }
  try {
    (void)fabricsim::parse_size_bytes(text);
  } catch (const fabricsim::UnitError&) {
  }
  return 0;
}
