// The memory fabricsim plans against, and what it says when an allocation fails anyway.
//
// What would not fit is refused up front, as bad input (exit 2), with an estimate: every
// structure whose size the input sets (the YAML tree, traffic flows, routing tables) is
// estimated before it is built and refused when it would take over half of the budget. An
// allocation that fails all the same is reported as out of memory, naming what was being built
// (OutOfMemory), never as an internal error.
#pragma once

#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

namespace fabricsim {

/// The memory estimates are checked against.
struct MemoryBudget {
  double bytes = 0;  ///< 0 when unknown: nothing is refused
  /// What the number is, for messages: "this machine's 23.4 GB", "this process's 1.6 GB limit
  /// (ulimit -v)".
  std::string text;
};

/// FABRICSIM_MAX_MEMORY (a size, e.g. "16GiB": a container's limit, which the machine's size
/// hides) when it is set; else the least of the machine's physical memory and this process's
/// address-space and data-segment limits (`ulimit -v`, `ulimit -d`), which make an allocation
/// beyond them fail. Throws UnitError naming the variable for a value that is not a size.
MemoryBudget memory_budget();

/// True when `need_bytes` is over half of `budget` (the rule every up-front estimate follows:
/// the other half is for everything not estimated). False when the budget is unknown.
inline bool over_half(double need_bytes, const MemoryBudget& budget) {
  return budget.bytes > 0 && need_bytes > budget.bytes / 2;
}

/// "3.5 GB": bytes in decimal gigabytes with one decimal, for estimates in messages.
std::string gigabytes_text(double bytes);

/// An allocation failed while something was being built. what() reads "out of memory while
/// building WHAT"; `estimated` says whether that phase is one the up-front estimates cover
/// (loading the scenario, building the fabric, its routes and the workload's plan): then the
/// scenario is too large for this machine's memory, bad input (exit 2), like a refusal of the
/// estimate; otherwise (the simulation's own state) the run is incomplete (exit 1). The message
/// is made before the allocation fails: when it does, there may be no memory to make it.
class OutOfMemory : public std::exception {
 public:
  OutOfMemory(std::shared_ptr<const std::string> message, bool estimated)
      : message_(std::move(message)), estimated_(estimated) {}
  const char* what() const noexcept override { return message_->c_str(); }
  bool estimated() const { return estimated_; }

 private:
  std::shared_ptr<const std::string> message_;
  bool estimated_;
};

/// Returns build(); a std::bad_alloc thrown inside becomes OutOfMemory naming `what` ("the
/// routing tables (…)"), `estimated` as there. An OutOfMemory from an inner phase passes
/// through unchanged (the innermost names best what was being built).
template <class Build>
decltype(auto) building(Build&& build, const std::string& what, bool estimated = true) {
  const auto message = std::make_shared<const std::string>("out of memory while building " + what);
  try {
    return build();
  } catch (const std::bad_alloc&) {
    throw OutOfMemory(message, estimated);
  }
}

}  // namespace fabricsim
