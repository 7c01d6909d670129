// libFuzzer target: a scenario file through `fabricsim validate`: the YAML loader
// (sim/config/loader.hpp), then prepare() (sim/run/run.hpp: the fabric is built, routed and its
// workload planned). Bad input must end in a ConfigError or UnitError (exit 2); anything else
// escaping (the CLI's "internal error", exit 1), a crash, a hang or a runaway allocation is a
// finding. The loader reads files, so each input is written to a private file first.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz/fabric_size.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/units.hpp"
#include "sim/run/run.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // In a private copy of the repository's layout (configs/ linked in), so that a seed's
  // relative switch profile (profile: ../configs/switches/...) resolves as it does in scenarios/.
  static const std::string path = [] {
    // validate refuses routing tables over half the machine's memory; the fuzzer's is 2 GB of
    // RSS (fuzz/run.sh), so the machine is said to have 1 GiB.
    setenv("FABRICSIM_MAX_MEMORY", "1GiB", 0);
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("fabricsim-fuzz-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir / "scenarios");
    std::error_code ec;
    std::filesystem::create_directory_symlink(
        std::filesystem::path(FABRICSIM_SOURCE_DIR) / "configs", dir / "configs", ec);
    return (dir / "scenarios" / "fuzz.yaml").string();
  }();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    fabricsim::Scenario sc = fabricsim::load_scenario(path);
    if (fuzzing::small_enough(sc)) (void)fabricsim::prepare(sc);
  } catch (const fabricsim::ConfigError&) {
  } catch (const fabricsim::UnitError&) {
  }
  std::remove(path.c_str());
  return 0;
}
