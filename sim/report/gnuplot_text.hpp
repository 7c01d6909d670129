// Text for gnuplot scripts and data files, shared by `sweep`'s plots and its report's.
#pragma once

#include <string>

namespace fabricsim {

/// A gnuplot string literal: single-quoted (no escapes inside but '' for a quote), one line.
std::string gp_string(const std::string& s);

/// A value as a double-quoted field of a gnuplot data file (for xticlabels): '"' becomes '\'',
/// line breaks blanks.
std::string dat_string(const std::string& s);

/// A one-line gnuplot comment ("# TEXT\n"; line breaks in TEXT become blanks).
std::string gp_comment(const std::string& s);

}  // namespace fabricsim
