#include "sim/core/memory_budget.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "sim/core/units.hpp"

namespace fabricsim {

std::string gigabytes_text(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  return text;
}

MemoryBudget memory_budget() {
  if (const char* env = std::getenv("FABRICSIM_MAX_MEMORY"); env != nullptr && *env != '\0') {
    try {
      const double bytes = static_cast<double>(parse_size_bytes(env));
      return {bytes, "this machine's " + gigabytes_text(bytes) + " (FABRICSIM_MAX_MEMORY)"};
    } catch (const UnitError& e) {
      throw UnitError("FABRICSIM_MAX_MEMORY=" + std::string(env) +
                      ": expected a size such as 16GiB: " + e.what());
    }
  }
  MemoryBudget b;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) {
    b.bytes = static_cast<double>(pages) * static_cast<double>(page);
    b.text = "this machine's " + gigabytes_text(b.bytes);
  }
  // A limit below the machine's memory makes an allocation beyond it fail (std::bad_alloc).
  const std::pair<int, const char*> limits[] = {{RLIMIT_AS, "ulimit -v"},
                                                {RLIMIT_DATA, "ulimit -d"}};
  for (const auto& [resource, name] : limits) {
    rlimit l{};
    if (getrlimit(resource, &l) != 0 || l.rlim_cur == RLIM_INFINITY) continue;
    const double bytes = static_cast<double>(l.rlim_cur);
    if (b.bytes <= 0 || bytes < b.bytes) {
      b.bytes = bytes;
      b.text = "this process's " + gigabytes_text(bytes) + " limit (" + name + ")";
    }
  }
  return b;
}

}  // namespace fabricsim
