#include "topologies/uplinks.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "sim/config/loader.hpp"
#include "sim/core/units.hpp"
#include "topologies/oversubscription.hpp"

namespace fabricsim {

void check_derived_uplinks(const Scenario& sc, const UplinkDerivation& d) {
  const double host_cap_bps =
      static_cast<double>(d.host_ports) * static_cast<double>(d.host_rate_bps);
  const double uplinks = host_cap_bps / (d.ratio * static_cast<double>(d.fabric_rate_bps));
  const bool radix_given = sc.sw.radix > 0;
  const int64_t ports = radix_given ? sc.sw.radix : kLargestSwitchPorts;
  const int64_t free_ports = ports - d.host_ports;
  if (uplinks <= static_cast<double>(d.host_ports) || uplinks <= static_cast<double>(free_ports)) {
    return;
  }
  // The uplinks a leaf may have: the ports beside its hosts, or as many as its hosts.
  const int64_t allowed = std::max(free_ports, d.host_ports);
  // The slowest fabric rate whose uplinks fit, rounded up to three significant digits.
  const double slowest = host_cap_bps / (d.ratio * static_cast<double>(allowed));
  const double step = std::pow(10.0, std::floor(std::log10(slowest)) - 2);
  const int64_t slowest_bps = static_cast<int64_t>(std::ceil(slowest / step) * step);
  const auto count = [](double x) {
    std::ostringstream s;
    s.precision(15);
    s << std::round(x);
    return s.str();
  };
  std::ostringstream msg;
  msg << format_rate(d.fabric_rate_bps) << " fabric links would need " << count(uplinks)
      << " uplinks per " << d.leaf << " to carry its " << d.host_ports << " hosts x "
      << format_rate(d.host_rate_bps) << " at " << ratio_text(d.ratio) << " ("
      << count(uplinks / static_cast<double>(d.spines)) << " parallel links to "
      << (d.spines == 1 ? std::string("its spine, ")
                        : "each of its " + std::to_string(d.spines) + " spines, ")
      << count(uplinks * static_cast<double>(d.leaves)) << " leaf-spine links in all); a " << d.leaf
      << " has "
      << (radix_given ? "switch.radix " + std::to_string(ports) + " ports"
                      : std::to_string(ports) +
                            " ports at most (the largest switches, Tomahawk 5 class: 512 x "
                            "100G; set switch.radix for another)")
      << ", " << std::max<int64_t>(free_ports, 0) << " beside its host ports: expected a "
      << "fabric_rate of at least " << format_rate(slowest_bps);
  const auto from_command_line = [&](const char* key) {
    const auto it = sc.origins.find(key);
    return it != sc.origins.end() && it->second.where.rfind("--", 0) == 0;
  };
  const bool blame_host =
      from_command_line("link.host_rate") && !from_command_line("link.fabric_rate");
  throw key_error(sc, blame_host ? "link.host_rate" : "link.fabric_rate", msg.str());
}

}  // namespace fabricsim
