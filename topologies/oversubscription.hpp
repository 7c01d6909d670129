// Oversubscription ratios a leaf can be built with, for "cannot be built" messages.
#pragma once

#include <cstdint>
#include <string>

namespace fabricsim {

/// A requested ratio o as text, "o:1" ("3:1", "1.5:1"), for messages.
std::string ratio_text(double o);

/// host capacity : uplink capacity as a reduced fraction ("4:3") for `hosts` ports at
/// `host_rate_bps` over `uplinks` at `fabric_rate_bps`; the scenario loader reads it back exactly.
std::string capacity_ratio(int64_t hosts, int64_t host_rate_bps, int64_t uplinks,
                           int64_t fabric_rate_bps);

/// The (at most four) buildable ratios >= 1:1 nearest to `requested`, in decreasing order, when
/// uplinks must be a whole multiple of `spines`: ", "-separated capacity_ratio texts, or
/// "none (even one uplink per spine is more than the host capacity)".
std::string nearest_buildable_ratios(int64_t hosts, int64_t host_rate_bps, int64_t spines,
                                     int64_t fabric_rate_bps, double requested);

}  // namespace fabricsim
