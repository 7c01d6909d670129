// results.json `link_events` and the summary's lines about topology.link_events.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "sim/core/units.hpp"
#include "sim/report/report.hpp"

namespace fabricsim {

namespace {

nlohmann::ordered_json or_null(int64_t v, bool null) {
  return null ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v);
}

}  // namespace

nlohmann::ordered_json link_events_json(const LinkEventsReport& r) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["reconvergence_delay_ps"] = r.reconvergence_delay_ps;
  j["lost_packets"] = r.lost_packets;
  j["lost_without_route"] = r.lost_without_route;
  const QpStallRow& s = r.longest_stall;
  j["longest_stall"] = s.stall_ps > 0 ? ordered_json{{"stall_ps", s.stall_ps},
                                                     {"from_ps", s.from_ps},
                                                     {"src", s.src_host},
                                                     {"dst", s.dst_host}}
                                      : ordered_json(nullptr);
  j["routes_cut"] = r.cut.empty() ? ordered_json(nullptr) : ordered_json(r.cut);
  j["events"] = ordered_json::array();
  for (const LinkEventRow& e : r.events) {
    j["events"].push_back({{"at_ps", e.at_ps},
                           {"link", e.link},
                           {"state", e.state},
                           {"rate_bps", or_null(e.rate_bps, e.rate_bps <= 0)},
                           {"routes_ps", or_null(e.routes_ps, e.routes_ps < 0)},
                           {"ran", e.ran}});
  }
  j["links"] = ordered_json::array();
  for (const auto& [link, lost] : r.links) {
    j["links"].push_back({{"link", link}, {"lost_packets", lost}});
  }
  return j;
}

void print_link_events(std::ostream& out, const LinkEventsReport& r) {
  // At most a few lines: the first changes in full, then how many more.
  constexpr size_t kShown = 6;
  out << "# link events: ";
  for (size_t i = 0; i < r.events.size() && i < kShown; ++i) {
    const LinkEventRow& e = r.events[i];
    out << (i ? "; " : "") << e.link << ' '
        << (e.state == "rate" ? "at " + format_rate(e.rate_bps) : e.state) << " at "
        << format_time(e.at_ps);
    if (e.state == "up" && e.rate_bps > 0) out << " (" << format_rate(e.rate_bps) << ")";
    if (e.state != "rate") {
      out << (e.routes_ps >= 0 ? ", routes at " + format_time(e.routes_ps) : ", routes unchanged");
    }
  }
  if (r.events.size() > kShown) out << "; " << r.events.size() - kShown << " more (results.json)";
  out << '\n';
  const auto late =
      std::count_if(r.events.begin(), r.events.end(), [](const LinkEventRow& e) { return !e.ran; });
  if (late > 0) {
    out << "# link events: " << late << " of them fell after the run ended at "
        << format_time(r.end_ps) << " and did not happen\n";
  }
  const bool any_down = std::any_of(r.events.begin(), r.events.end(), [](const LinkEventRow& e) {
    return e.state == "down" && e.ran;
  });
  if (!any_down) return;
  out << "# link loss  : " << r.lost_packets << " packets lost";
  if (r.lost_without_route > 0) {
    out << " (" << r.lost_packets - r.lost_without_route << " on links while down, "
        << r.lost_without_route << " at nodes whose new routes had no way to their destination)";
  } else {
    out << " on links while down";
  }
  const QpStallRow& s = r.longest_stall;
  if (s.stall_ps > 0) {
    out << "; longest stall of a queue pair " << format_time(s.stall_ps) << " (host " << s.src_host
        << " -> host " << s.dst_host << ", from " << format_time(s.from_ps) << ")";
  }
  out << '\n';
  if (!r.cut.empty()) {
    out << "# link cut   : routes could not avoid the links down (" << r.cut
        << "): the nodes kept their routes, and what crossed those links was lost while they "
           "were down\n";
  }
}

}  // namespace fabricsim
