#include "sim/core/strings.hpp"

#include <algorithm>

namespace fabricsim {

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  // `word` written short: its letters in order in `c`, same first letter, at least half as long.
  const auto abbreviates = [&](const std::string& c) {
    if (word.empty() || c.empty() || word[0] != c[0] || 2 * word.size() < c.size()) return false;
    size_t i = 0;
    for (size_t j = 0; j < c.size() && i < word.size(); ++j) i += word[i] == c[j];
    return i == word.size();
  };
  std::string best, best_abbreviated;
  size_t best_distance = limit + 1, best_abbreviated_distance = std::string::npos;
  std::vector<size_t> row;
  for (const std::string& c : candidates) {
    // Levenshtein distance, one row at a time.
    row.resize(c.size() + 1);
    for (size_t j = 0; j <= c.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= word.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= c.size(); ++j) {
        const size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (word[i - 1] != c[j - 1])});
        diagonal = above;
      }
    }
    if (row[c.size()] < best_distance) {
      best_distance = row[c.size()];
      best = c;
    }
    if (row[c.size()] < best_abbreviated_distance && abbreviates(c)) {
      best_abbreviated_distance = row[c.size()];
      best_abbreviated = c;
    }
  }
  return best.empty() ? best_abbreviated : best;
}

}  // namespace fabricsim
