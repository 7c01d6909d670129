// libFuzzer target: the nccl-tests log parser (all_reduce_perf and the other *_perf tables),
// calibration/nccl_log.hpp. A log that is not one must end in a ParseError (exit 2).
#include <cstddef>
#include <cstdint>
#include <string>

#include "calibration/nccl_log.hpp"
#include "calibration/parse_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)fabricsim::parse_nccl_tests(text, "fuzz.log");
  } catch (const fabricsim::ParseError&) {
  }
  return 0;
}
