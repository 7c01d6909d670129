// Small string helpers shared by the loader, the registries and the components' own name checks.
#pragma once

#include <string>
#include <vector>

namespace fabricsim {

/// The closest candidate to `word` by edit distance, when it is close enough (distance at most
/// max(2, word.size() / 3)); failing that, the closest candidate that `word` abbreviates (its
/// letters in order, the same first letter, at least half as long: "cut_thru" -> "cut_through");
/// else "". Used for every "did you mean".
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace fabricsim
