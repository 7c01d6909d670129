// The job placement policies (jobs/placement.hpp) on hand-made fabrics: which servers each
// gives, as a topology-aware scheduler (packed), a spreading one (spread) and one ignoring the
// topology (random) hand them out.
#include <catch2/catch.hpp>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "jobs/placement.hpp"

using namespace fabricsim;

namespace {

/// `leaves` groups of `per_leaf` servers, server s under leaf s / per_leaf, all free.
PlacementRequest fabric(int leaves, int per_leaf, int servers) {
  PlacementRequest r;
  for (int s = 0; s < leaves * per_leaf; ++s) r.group.push_back(s / per_leaf);
  r.free.assign(r.group.size(), true);
  r.servers = servers;
  return r;
}

}  // namespace

TEST_CASE("packed fills whole leaves and puts the rest where it fits best") {
  PlacementRequest r = fabric(4, 4, 8);
  CHECK(place("packed", r) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  // Leaf 0 has 2 free servers, leaves 1-3 have 4: a job of 2 goes to leaf 0 (it fits exactly),
  // a job of 3 to leaf 1 (the first of those it fits in with the fewest free).
  r.free[0] = r.free[1] = false;
  r.servers = 2;
  CHECK(place("packed", r) == std::vector<int>{2, 3});
  r.servers = 3;
  CHECK(place("packed", r) == std::vector<int>{4, 5, 6});
  // 6 servers: one whole leaf (the fullest: leaf 1) and 2 where they fit best (leaf 0).
  r.servers = 6;
  CHECK(place("packed", r) == std::vector<int>{2, 3, 4, 5, 6, 7});
}

TEST_CASE("spread takes one server per leaf in turn") {
  PlacementRequest r = fabric(4, 4, 8);
  CHECK(place("spread", r) == std::vector<int>{0, 1, 4, 5, 8, 9, 12, 13});
  r.servers = 3;
  CHECK(place("spread", r) == std::vector<int>{0, 4, 8});
  // A leaf with nothing free is skipped.
  for (int s = 4; s < 8; ++s) r.free[s] = false;
  CHECK(place("spread", r) == std::vector<int>{0, 8, 12});
}

TEST_CASE("random draws every free server equally often over seeds") {
  // 16 servers, jobs of 4: each server is chosen with probability 1/4. Over 4,000 seeds, each
  // count is Binomial(4000, 1/4): mean 1,000, standard deviation 27.4; 5 sigma either way.
  PlacementRequest r = fabric(4, 4, 4);
  std::vector<int> count(16, 0);
  for (uint64_t seed = 1; seed <= 4000; ++seed) {
    r.seed = seed;
    const std::vector<int> s = place("random", r);
    REQUIRE(s.size() == 4);
    for (const int x : s) ++count[static_cast<size_t>(x)];
  }
  for (const int c : count) CHECK(std::abs(c - 1000) < 137);
  // The same seed, the same servers; never one taken.
  r.seed = 7;
  CHECK(place("random", r) == place("random", r));
  r.free[3] = false;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    r.seed = seed;
    for (const int x : place("random", r)) CHECK(x != 3);
  }
}

TEST_CASE("place refuses too few free servers and a policy that breaks its promise") {
  PlacementRequest r = fabric(2, 2, 5);
  CHECK_THROWS_WITH(place("packed", r), "the job needs 5 servers and 4 are free");
  r.servers = 2;
  CHECK_THROWS_WITH(place("nearest", r), "no placement policy named 'nearest'");
  register_placement({"test_taken", "returns a taken server", [](const PlacementRequest&) {
                        return std::vector<int>{0, 1};
                      }});
  r.free[0] = false;
  CHECK_THROWS_WITH(place("test_taken", r),
                    "placement test_taken chose server 0, which is not free or chosen twice");
  CHECK_THROWS_AS(register_placement({"packed", "again", nullptr}), std::invalid_argument);
  CHECK(placement_names().front() == "packed");
  CHECK(placement_names().back() == "test_taken");
}
