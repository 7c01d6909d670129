// GitHub-flavoured Markdown tables padded to read as tables in a terminal too: sweep.md's and
// the sweep report's.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace fabricsim {

/// Writes a GFM table: `header` then `rows` (a short row is padded with empty cells), '|' in a
/// cell escaped and line breaks as blanks, each column padded to its widest cell in UTF-8 code
/// points, and right-aligned where `right_aligned[i]` (numbers). `right_aligned` has one entry
/// per header cell.
void write_markdown_table(std::ostream& out, const std::vector<std::string>& header,
                          const std::vector<std::vector<std::string>>& rows,
                          const std::vector<bool>& right_aligned);

}  // namespace fabricsim
