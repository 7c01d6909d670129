#include "sim/report/markdown_table.hpp"

#include <algorithm>

namespace fabricsim {
namespace {

/// A Markdown table cell: '|' escaped, line breaks as blanks.
std::string md_cell(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    if (ch == '|') {
      out += "\\|";
    } else if (ch == '\n' || ch == '\r') {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out;
}

/// Width in terminal columns of UTF-8 text (code points).
size_t text_width(const std::string& s) {
  size_t n = 0;
  for (const char ch : s) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

}  // namespace

void write_markdown_table(std::ostream& out, const std::vector<std::string>& header,
                          const std::vector<std::vector<std::string>>& rows,
                          const std::vector<bool>& right_aligned) {
  std::vector<std::vector<std::string>> cells;
  cells.reserve(rows.size() + 1);
  std::vector<std::string> head;
  for (const std::string& h : header) head.push_back(md_cell(h));
  cells.push_back(head);
  for (const auto& row : rows) {
    std::vector<std::string> r;
    for (const std::string& c : row) r.push_back(md_cell(c));
    r.resize(header.size());
    cells.push_back(r);
  }
  std::vector<size_t> width(header.size(), 3);
  for (const auto& r : cells) {
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], text_width(r[i]));
  }
  const auto line = [&](const std::vector<std::string>& r) {
    out << "|";
    for (size_t i = 0; i < r.size(); ++i) {
      const std::string pad(width[i] - text_width(r[i]), ' ');
      out << " " << (right_aligned[i] ? pad + r[i] : r[i] + pad) << " |";
    }
    out << "\n";
  };
  line(cells[0]);
  out << "|";
  for (size_t i = 0; i < width.size(); ++i) {
    out << " "
        << (right_aligned[i] ? std::string(width[i] - 1, '-') + ":" : std::string(width[i], '-'))
        << " |";
  }
  out << "\n";
  for (size_t r = 1; r < cells.size(); ++r) line(cells[r]);
}

}  // namespace fabricsim
