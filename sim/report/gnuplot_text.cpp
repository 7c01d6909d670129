#include "sim/report/gnuplot_text.hpp"

namespace fabricsim {

std::string gp_string(const std::string& s) {
  std::string q = "'";
  for (const char ch : s) {
    if (ch == '\'') {
      q += "''";
    } else if (ch == '\n' || ch == '\r') {
      q += ' ';
    } else {
      q += ch;
    }
  }
  return q + "'";
}

std::string dat_string(const std::string& s) {
  std::string q = "\"";
  for (const char ch : s) q += ch == '"' ? '\'' : (ch == '\n' || ch == '\r') ? ' ' : ch;
  return q + "\"";
}

std::string gp_comment(const std::string& s) {
  std::string c = "# ";
  for (const char ch : s) c += (ch == '\n' || ch == '\r') ? ' ' : ch;
  return c + "\n";
}

}  // namespace fabricsim
