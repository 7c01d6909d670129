// libFuzzer target: the perftest log parser (ib_write_bw, ib_read_bw, ib_send_bw, ib_*_lat),
// calibration/perftest.hpp. A log that is not one must end in a ParseError (exit 2).
#include <cstddef>
#include <cstdint>
#include <string>

#include "calibration/parse_error.hpp"
#include "calibration/perftest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)fabricsim::parse_perftest(text, "fuzz.log");
  } catch (const fabricsim::ParseError&) {
  }
  return 0;
}
