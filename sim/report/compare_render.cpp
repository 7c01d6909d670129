// compare_markdown() and compare_html(): the comparison page rendered (compare.hpp).
#include <algorithm>
#include <sstream>

#include "sim/report/compare.hpp"
#include "sim/report/markdown_table.hpp"

namespace fabricsim {
namespace {

// ---- Markdown ---------------------------------------------------------------------------------

/// A GFM table, cells padded so that it reads as a table in a terminal too.
void md_table(std::ostream& out, const CompareTable& t) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : t.rows) {
    std::vector<std::string> r;
    for (const CompareCell& c : row) r.push_back(c.text);
    rows.push_back(r);
  }
  write_markdown_table(out, t.header, rows, t.numeric);
}

void md_plots(std::ostream& out, const CompareDocument& doc, const CompareFigures& figures,
              const std::string& table) {
  for (const ComparePlot& p : doc.plots) {
    if (p.after_table != table) continue;
    const auto svg = figures.svg.find(p.stem);
    if (svg != figures.svg.end() && !svg->second.empty()) {
      out << "\n![" << p.title << "](" << p.stem << ".svg)\n\n" << p.how_to_read << "\n";
    } else {
      const auto why = figures.missing.find(p.stem);
      out << "\nPlot missing: " << p.stem << ".svg ("
          << (why != figures.missing.end() ? why->second : std::string("not drawn"))
          << "); its script and data are beside this file: `gnuplot " << p.stem
          << ".gp` draws it. The table above has every number.\n";
    }
  }
}

// ---- HTML -------------------------------------------------------------------------------------

std::string html_escape(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

/// Text with `code` spans (backquotes) as HTML: escaped, the spans in <code>.
std::string html_text(const std::string& s) {
  std::string out;
  bool code = false;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '`') {
      out += html_escape(s.substr(start, i - start));
      if (i < s.size()) out += code ? "</code>" : "<code>";
      code = !code;
      start = i + 1;
    }
  }
  if (!code) out += "</code>";  // an unpaired backquote: close the span
  return out;
}

/// Every `from` in `s` replaced by `to`.
std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/// gnuplot's SVG made fit to sit inline in an HTML page: the XML prolog dropped, and its ids
/// (gnuplot gives every plot the same ones) prefixed with `prefix` along with the references
/// to them.
std::string inline_svg(const std::string& svg, const std::string& prefix) {
  const size_t at = svg.find("<svg");
  std::string s = at == std::string::npos ? svg : svg.substr(at);
  for (const char* q : {"'", "\""}) {
    s = replace_all(s, std::string("id=") + q, std::string("id=") + q + prefix);
    s = replace_all(s, std::string("href=") + q + "#", std::string("href=") + q + "#" + prefix);
  }
  s = replace_all(s, "url(#", "url(#" + prefix);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

const char* const kStyle =
    "body{font-family:Helvetica,Arial,sans-serif;font-size:14px;line-height:1.4;color:#222;"
    "max-width:1100px;margin:20px auto;padding:0 16px}\n"
    "h1{font-size:22px;margin-bottom:6px}\n"
    "h2{font-size:17px;margin:26px 0 4px;border-bottom:1px solid #ccc;padding-bottom:2px}\n"
    "p.how,figcaption{color:#555;font-style:italic;margin:4px 0 8px}\n"
    "table{border-collapse:collapse;margin:6px 0}\n"
    "th,td{border:1px solid #ccc;padding:3px 8px;vertical-align:top}\n"
    "th{background:#f2f2f2;font-weight:bold;text-align:left}\n"
    "td,th{white-space:nowrap}\ntd:last-child{white-space:normal}\n"
    "td.num,th.num{text-align:right}\n"
    "td.good{color:#17803d}\ntd.bad{color:#c0392b}\n"
    "code{background:#f4f4f4;padding:1px 4px;font-size:13px}\n"
    "figure{margin:10px 0}\nfigure svg{max-width:100%;height:auto}\n"
    "figure svg g,figure svg text{font-family:Helvetica,Arial,'Liberation Sans',sans-serif}\n"
    "ul{margin:6px 0;padding-left:22px}\np.note{color:#555;font-size:13px}\n";

void html_table(std::ostream& out, const CompareTable& t) {
  out << "<table>\n<tr>";
  for (size_t i = 0; i < t.header.size(); ++i) {
    out << "<th" << (t.numeric[i] ? " class=\"num\"" : "") << ">" << html_escape(t.header[i])
        << "</th>";
  }
  out << "</tr>\n";
  for (const auto& row : t.rows) {
    out << "<tr>";
    for (size_t i = 0; i < t.header.size(); ++i) {
      const CompareCell c = i < row.size() ? row[i] : CompareCell{};
      std::string cls = t.numeric[i] ? "num" : "";
      if (c.tone != 0) cls += std::string(cls.empty() ? "" : " ") + (c.tone > 0 ? "good" : "bad");
      out << "<td" << (cls.empty() ? "" : " class=\"" + cls + "\"") << ">" << html_escape(c.text)
          << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</table>\n";
}

void html_plots(std::ostream& out, const CompareDocument& doc, const CompareFigures& figures,
                const std::string& table) {
  for (size_t i = 0; i < doc.plots.size(); ++i) {
    const ComparePlot& p = doc.plots[i];
    if (p.after_table != table) continue;
    const auto svg = figures.svg.find(p.stem);
    if (svg != figures.svg.end() && !svg->second.empty()) {
      out << "<figure>\n"
          << inline_svg(svg->second, p.stem + "-") << "\n<figcaption>" << html_text(p.how_to_read)
          << "</figcaption>\n</figure>\n";
    } else {
      const auto why = figures.missing.find(p.stem);
      out << "<p class=\"note\">Plot missing: " << html_escape(p.stem) << ".svg ("
          << html_escape(why != figures.missing.end() ? why->second : std::string("not drawn"))
          << "); its script and data are beside this file: <code>gnuplot " << html_escape(p.stem)
          << ".gp</code> draws it. The table above has every number.</p>\n";
    }
  }
}

}  // namespace

std::string compare_markdown(const CompareDocument& doc, const CompareFigures& figures) {
  std::ostringstream out;
  out << "# " << doc.title << "\n\n";
  for (const std::string& p : doc.intro) out << p << "\n\n";
  out << "## At a glance\n\n";
  for (const std::string& g : doc.glance) out << "- " << g << "\n";
  for (const CompareTable& t : doc.tables) {
    out << "\n## " << t.title << "\n\n" << t.how_to_read << "\n";
    if (!t.rows.empty()) {
      out << "\n";
      md_table(out, t);
    }
    if (!t.notes.empty()) out << "\n";
    for (const std::string& n : t.notes) out << "- " << n << "\n";
    md_plots(out, doc, figures, t.id);
  }
  out << "\n---\n\n";
  for (const std::string& n : doc.notes) out << n << "\n\n";
  std::string s = out.str();
  while (s.size() > 1 && s[s.size() - 1] == '\n' && s[s.size() - 2] == '\n') s.pop_back();
  return s;
}

std::string compare_html(const CompareDocument& doc, const CompareFigures& figures) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
      << html_escape(doc.title) << "</title>\n<style>\n"
      << kStyle << "</style>\n</head>\n<body>\n";
  out << "<h1>" << html_escape(doc.title) << "</h1>\n";
  for (const std::string& p : doc.intro) out << "<p>" << html_text(p) << "</p>\n";
  out << "<h2>At a glance</h2>\n<ul>\n";
  for (const std::string& g : doc.glance) out << "<li>" << html_text(g) << "</li>\n";
  out << "</ul>\n";
  for (const CompareTable& t : doc.tables) {
    out << "<h2 id=\"" << t.id << "\">" << html_escape(t.title) << "</h2>\n<p class=\"how\">"
        << html_text(t.how_to_read) << "</p>\n";
    if (!t.rows.empty()) html_table(out, t);
    if (!t.notes.empty()) {
      out << "<ul>\n";
      for (const std::string& n : t.notes) out << "<li>" << html_text(n) << "</li>\n";
      out << "</ul>\n";
    }
    html_plots(out, doc, figures, t.id);
  }
  out << "<hr>\n";
  for (const std::string& n : doc.notes) out << "<p class=\"note\">" << html_text(n) << "</p>\n";
  out << "</body>\n</html>\n";
  return out.str();
}

}  // namespace fabricsim
