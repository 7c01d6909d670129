// topology.link_events: links going down, coming back or changing rate during the run
// (LinkEventConfig, scenario.hpp), each a map whose keys are link_event_keys(). The names are
// resolved against the fabric by sim/run/link_events.cpp.
#include "sim/config/loader_detail.hpp"

namespace fabricsim::config_detail {

namespace {

/// When: up to an hour (3600s) of simulated time, as traffic flows' start.
const QuantitySpec kEventTime{
    "time", "200us", parse_time_ps, 0, 3'600'000'000'000'000, "a time from 0s to 3600s"};
const QuantitySpec kEventSpan{
    "time", "100us", parse_time_ps, 1, 3'600'000'000'000'000, "a positive time up to 3600s"};
const Choices kLinkStates{"link state", {"down", "up"}, {}, {}};

// clang-format off
/// What other tools and words call these keys: "did you mean" for them too.
const std::pair<const char*, const char*> kLinkEventAliases[] = {
  {"time", "at"}, {"start", "at"}, {"when", "at"},
  {"node", "switch"}, {"device", "switch"},
  {"status", "state"}, {"action", "state"},
  {"speed", "rate"},
  {"duration", "down_for"}, {"for", "down_for"},
  {"period", "every"}, {"interval", "every"},
  {"count", "repeat"}, {"times", "repeat"},
};
// clang-format on

const char* const kExample = "e.g. {at: 200us, link: leaf0-spine1, state: down}";

}  // namespace

// clang-format off
std::span<const ItemKey<LinkEventConfig>> link_event_keys() {
  using E = LinkEventConfig;
  static const ItemKey<E> rows[] = {
  {"at", true, Quantity(kEventTime), own<&E::at_ps>, "when, from the start of the run"},
  {"link", false, Custom("link", "a link like leaf0-spine1 (#i: the i-th parallel link, #*: all)"),
   own<&E::link>, "the link that changes (this or switch)",
   [](const Value& v, E& e) { e.link = v.string(); }},
  {"switch", false, Custom("switch", "a switch name as fabricsim topo --dot shows it"),
   own<&E::node>, "a switch whose every link changes: a switch going down or coming back",
   [](const Value& v, E& e) { e.node = v.string(); }},
  {"state", false, Choice(kLinkStates), own<&E::state>, "down | up; none = a rate change"},
  {"rate", false, Quantity(kNetworkRate), own<&E::rate_bps>,
   "the link's rate from then on (a degraded link; with up: the rate it comes back at)"},
  {"down_for", false, Quantity(kEventSpan), own<&E::down_for_ps>,
   "with state down: up again this long after (a flap)"},
  {"every", false, Quantity(kEventSpan), own<&E::every_ps>,
   "with repeat: the event recurs this often (flapping)"},
  {"repeat", false, Int(1, 100'000), own<&E::repeat>, "how many times the event happens"},
  };
  return rows;
}
// clang-format on

void parse_link_events(const Value& v, Scenario& s) {
  s.topology.link_events.clear();
  std::vector<std::string> keys;
  for (const ItemKey<LinkEventConfig>& k : link_event_keys()) keys.emplace_back(k.key);
  const std::string expected = std::string("a list of events, ") + kExample;
  size_t i = 0;
  for (const Value& item : v.items(expected, 0, 1'000'000)) {
    const std::string path = v.path() + "[" + std::to_string(i++) + "]";
    if (!item.node().IsMap()) {
      item.fail("expected an event: a map with " + join_words(keys, ", ") + ", " + kExample +
                ", got " + describe(item.node()));
    }
    const auto given =
        map_keys(item.context(), item, path, keys, "a link event", kLinkEventAliases);
    LinkEventConfig e;
    for (const ItemKey<LinkEventConfig>& k : link_event_keys()) {
      const auto it = given.find(k.key);
      if (it == given.end()) continue;
      read_item(k, it->second, e);
      s.origins[it->second.path()] = it->second.origin();
    }
    s.origins[path] = item.origin();
    const auto fail_at = [&](const char* key, const std::string& message) {
      const auto it = given.find(key);
      (it != given.end() ? it->second : item).fail(message);
    };
    if (!given.count("at"))
      fail_at("at", "missing required key at: when the link changes, " + std::string(kExample));
    if (given.count("link") == given.count("switch")) {
      fail_at("switch", given.count("link")
                            ? "give link or switch, not both"
                            : std::string("missing link (or switch): what changes, ") + kExample);
    }
    if (e.state.empty() && e.rate_bps == 0) {
      fail_at("state",
              std::string("missing state (down or up) or rate: what happens, ") + kExample);
    }
    if (e.state == "down" && e.rate_bps > 0) {
      fail_at("rate",
              "a link going down has no rate; give the rate it comes back at with its up event");
    }
    if (e.down_for_ps > 0 && e.state != "down") {
      fail_at("down_for",
              "down_for is how long a link going down stays down: it needs state: down");
    }
    if (given.count("every") != (e.repeat > 1 ? 1u : 0u)) {
      fail_at(given.count("every") ? "every" : "repeat",
              given.count("every") ? "every needs repeat > 1: how many times the event happens"
                                   : "repeat > 1 needs every: how often the event recurs");
    }
    if (e.repeat > 1 && e.state == "down" && e.down_for_ps == 0) {
      fail_at("repeat",
              "a link cannot go down again while down: a repeated down needs down_for (a flap), "
              "e.g. {at: 1ms, link: leaf0-spine1, state: down, down_for: 100us, every: 1ms, "
              "repeat: 5}");
    }
    if (e.repeat > 1 && e.state == "up") {
      fail_at("repeat",
              "a link cannot come up again while up: repeat a down with down_for instead");
    }
    if (e.repeat > 1 && e.state == "down" && e.down_for_ps >= e.every_ps) {
      fail_at("down_for",
              "down_for must be shorter than every: the link must be back up before it goes down "
              "again");
    }
    // The last change must fall within the hour any time here may take.
    const __int128 last = static_cast<__int128>(e.at_ps) +
                          static_cast<__int128>(e.repeat - 1) * e.every_ps + e.down_for_ps;
    if (last > kEventTime.max) {
      fail_at(e.repeat > 1 ? "repeat" : "down_for",
              "the last change would fall after 3600s (at + (repeat - 1) x every + down_for); "
              "expected fewer repeats or a shorter period");
    }
    s.topology.link_events.push_back(std::move(e));
  }
}

}  // namespace fabricsim::config_detail
