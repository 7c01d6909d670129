#include "topologies/oversubscription.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <utility>
#include <vector>

namespace fabricsim {

std::string ratio_text(double o) {
  std::ostringstream s;
  s << o << ":1";
  return s.str();
}

std::string capacity_ratio(int64_t hosts, int64_t host_rate_bps, int64_t uplinks,
                           int64_t fabric_rate_bps) {
  const int64_t g = std::gcd(host_rate_bps, fabric_rate_bps);
  __int128 a = static_cast<__int128>(hosts) * (host_rate_bps / g);
  __int128 b = static_cast<__int128>(uplinks) * (fabric_rate_bps / g);
  __int128 x = a, y = b;
  while (y != 0) {
    const __int128 r = x % y;
    x = y;
    y = r;
  }
  if (x != 0) {
    a /= x;
    b /= x;
  }
  return std::to_string(static_cast<long long>(a)) + ":" +
         std::to_string(static_cast<long long>(b));
}

std::string nearest_buildable_ratios(int64_t hosts, int64_t host_rate_bps, int64_t spines,
                                     int64_t fabric_rate_bps, double requested) {
  const double host_cap = static_cast<double>(hosts) * static_cast<double>(host_rate_bps);
  std::vector<std::pair<double, int64_t>> options;  // (ratio, uplinks)
  for (int64_t k = 1; k <= 100'000; ++k) {
    const int64_t uplinks = k * spines;
    const double o =
        host_cap / (static_cast<double>(uplinks) * static_cast<double>(fabric_rate_bps));
    if (o < 1.0) break;
    options.emplace_back(o, uplinks);
  }
  if (options.empty()) return "none (even one uplink per spine is more than the host capacity)";
  const double target = std::log(std::max(requested, 1.0));
  std::sort(options.begin(), options.end(), [&](const auto& a, const auto& b) {
    return std::abs(std::log(a.first) - target) < std::abs(std::log(b.first) - target);
  });
  options.resize(std::min<size_t>(options.size(), 4));
  std::sort(options.begin(), options.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string text;
  for (const auto& [o, uplinks] : options) {
    text +=
        (text.empty() ? "" : ", ") + capacity_ratio(hosts, host_rate_bps, uplinks, fabric_rate_bps);
  }
  return text;
}

}  // namespace fabricsim
