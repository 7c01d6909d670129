#include "sim/report/sweep_report.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <system_error>

#include "sim/report/compare.hpp"
#include "sim/report/gnuplot_run.hpp"

namespace fabricsim {
namespace {

const char* const kReportFiles[] = {"report.md", "report.html"};
const char* const kPlotStems[] = {"report-busbw", "report-cost", "report-step"};

/// The cell of column `name` in `cells`; nullopt when there is no such column or it is empty.
std::optional<std::string> cell(const std::vector<std::string>& header,
                                const std::vector<std::string>& cells, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) return std::nullopt;
  const auto i = static_cast<size_t>(it - header.begin());
  if (i >= cells.size() || cells[i].empty()) return std::nullopt;
  return cells[i];
}

/// A file's whole text; nullopt when it cannot be read.
std::optional<std::string> slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return s.str();
}

}  // namespace

void remove_sweep_report(const std::filesystem::path& dir) {
  for (const char* f : kReportFiles) remove_output_file((dir / f).string());
  for (const char* stem : kPlotStems) {
    for (const char* ext : {".gp", ".dat", ".svg"}) {
      remove_output_file((dir / (std::string(stem) + ext)).string());
    }
  }
}

std::string write_sweep_report(const std::filesystem::path& dir, const std::string& scenario,
                               const std::string& command, const std::vector<SweepAxis>& axes,
                               const std::vector<std::vector<std::string>>& values,
                               const std::vector<std::string>& header,
                               const std::vector<SweepReportRow>& rows, bool training,
                               std::vector<OutputError>& failures) {
  remove_sweep_report(dir);
  CompareInput in;
  in.scenario = scenario;
  in.command = command;
  in.training = training;
  for (const SweepAxis& a : axes) in.axes.push_back(a.key);
  for (size_t i = 0; i < values.size(); ++i) {
    ComparePoint p;
    p.point = static_cast<int64_t>(i) + 1;
    p.values = values[i];
    const auto row = std::find_if(rows.begin(), rows.end(),
                                  [&](const SweepReportRow& r) { return r.point == p.point; });
    if (row == rows.end()) {
      p.status = "not run";
      p.reason = "the sweep stopped before this point started";
      in.points.push_back(p);
      continue;
    }
    p.status = cell(header, row->cells, "status").value_or("");
    p.reason = row->reason;
    p.complete = row->complete;
    if (const auto text = slurp(row->results)) {
      nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
      if (!j.is_discarded()) p.results = std::move(j);
    }
    try {
      if (const auto c = cell(header, row->cells, "cost_usd")) p.cost_usd = std::stod(*c);
      if (const auto w = cell(header, row->cells, "worst_port_p99_queue_bytes"))
        p.worst_port_p99_queue_bytes = std::stoll(*w);
    } catch (const std::exception&) {  // not a number: left out, the results.json has its own
    }
    in.points.push_back(std::move(p));
  }

  const CompareDocument doc = compare_document(compare_points(in));
  CompareFigures figures;
  const std::string gnuplot = find_gnuplot();
  std::string drawn;
  for (const ComparePlot& p : doc.plots) {
    try {
      write_output_file((dir / (p.stem + ".gp")).string(), p.gp);
      write_output_file((dir / (p.stem + ".dat")).string(), p.dat);
    } catch (const OutputError& e) {  // a script without its data is no plot
      failures.push_back(e);
      remove_output_file((dir / (p.stem + ".gp")).string());
      remove_output_file((dir / (p.stem + ".dat")).string());
      figures.missing[p.stem] = std::string("its files could not be written: ") + e.what();
      continue;
    }
    if (gnuplot.empty()) {
      figures.missing[p.stem] = "gnuplot is not on PATH: install gnuplot-nox";
      continue;
    }
    const std::string failure = run_gnuplot(gnuplot, dir, p.stem + ".gp");
    const std::optional<std::string> svg =
        failure.empty() ? slurp(dir / (p.stem + ".svg")) : std::nullopt;
    if (!svg || svg->empty()) {
      remove_output_file((dir / (p.stem + ".svg")).string());  // perhaps half drawn
      figures.missing[p.stem] =
          "gnuplot failed" + (failure.empty() ? std::string() : ": " + failure);
      std::cerr << "fabricsim sweep: note: gnuplot " << p.stem << ".gp failed (" << failure
                << "); the report says the plot is missing\n";
      continue;
    }
    figures.svg[p.stem] = *svg;
    drawn += (drawn.empty() ? "" : ", ") + p.stem;
  }
  std::string written;
  for (const auto& [name, text] :
       {std::pair<const char*, std::string>{"report.md", compare_markdown(doc, figures)},
        {"report.html", compare_html(doc, figures)}}) {
    try {
      write_output_file((dir / name).string(), text);
      written += written.empty() ? (dir / name).string() : ", " + std::string(name);
    } catch (const OutputError& e) {
      failures.push_back(e);
      remove_output_file((dir / name).string());
    }
  }
  std::string out = "# report     : " + (written.empty() ? "not written (see stderr)" : written);
  if (!drawn.empty()) out += "; plots " + drawn + " (.svg, .gp, .dat)";
  if (!doc.plots.empty() && gnuplot.empty()) {
    out += "; note: gnuplot is not on PATH, so the report has no plots (install gnuplot-nox)";
  }
  return out;
}

}  // namespace fabricsim
