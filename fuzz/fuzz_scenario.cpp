// libFuzzer target: a scenario file through `fabricsim validate`: the YAML loader
// (sim/config/loader.hpp), then prepare() (sim/cli/run.hpp: the fabric is built, routed and its
// workload planned). Bad input must end in a ConfigError or UnitError (exit 2); anything else
// escaping (the CLI's "internal error", exit 1), a crash, a hang or a runaway allocation is a
// finding. The loader reads files, so each input is written to a private file first.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "sim/cli/run.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/fabricsim-fuzz-" + std::to_string(getpid()) + ".yaml";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    fabricsim::Scenario sc = fabricsim::load_scenario(path);
    (void)fabricsim::prepare(sc);
  } catch (const fabricsim::ConfigError&) {
  } catch (const fabricsim::UnitError&) {
  }
  std::remove(path.c_str());
  return 0;
}
