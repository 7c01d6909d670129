// Scenario helpers; the structs themselves are documented in scenario.hpp.
#include "sim/config/scenario.hpp"

#include <string_view>

namespace fabricsim {

int datatype_bytes(const std::string& datatype) {
  struct Type {
    std::string_view name;
    int bytes;
  };
  // nccl-tests names, then the aliases nccl-tests also accepts.
  static constexpr Type kTypes[] = {
      {"int8", 1},   {"uint8", 1}, {"int32", 4},   {"uint32", 4},  {"int64", 8},
      {"uint64", 8}, {"half", 2},  {"float", 4},   {"double", 8},  {"bfloat16", 2},
      {"char", 1},   {"int", 4},   {"float16", 2}, {"float32", 4}, {"float64", 8},
  };
  for (const Type& t : kTypes) {
    if (t.name == datatype) return t.bytes;
  }
  return 0;
}

}  // namespace fabricsim
