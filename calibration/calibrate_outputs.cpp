#include "calibration/calibrate_outputs.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <system_error>

#include "sim/config/loader.hpp"
#include "sim/core/units.hpp"

namespace fabricsim {
namespace {

/// What a path that is not a regular file is, for the message refusing it.
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a pipe";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/// gnuplot's tick list for a log2 size axis, labelled as nccl-tests users read sizes ("1K",
/// "1M", not gnuplot's "1.04858x10^6"): the logged sizes, every k-th one so that at most 9 show.
std::string size_ticks(std::vector<int64_t> bytes) {
  std::sort(bytes.begin(), bytes.end());
  bytes.erase(std::unique(bytes.begin(), bytes.end()), bytes.end());
  const size_t stride = bytes.empty() ? 1 : (bytes.size() + 8) / 9;
  std::string tics;
  for (size_t i = 0; i < bytes.size(); i += stride) {
    tics += (tics.empty() ? "\"" : ", \"") + format_size_tick(bytes[i]) + "\" " +
            std::to_string(bytes[i]);
  }
  return tics;
}

/// Writes STEM.plot.dat and STEM.plot.gp (both, or neither) and, when gnuplot is on the PATH,
/// runs it to draw STEM-N.svg per input (log-scale sizes). Returns what it wrote, for the
/// summary line; a file that could not be written goes to `failures`.
std::string write_plots(const std::filesystem::path& stem, const std::vector<PlotSeries>& series,
                        std::vector<OutputError>& failures) {
  if (series.empty()) return "";
  const std::string dat = stem.string() + ".plot.dat", gp = stem.string() + ".plot.gp";
  std::ostringstream d, g;
  g << "# gnuplot " << gp << ": measured vs fitted per input (fabricsim calibrate)\n"
    << "set terminal svg size 800,500 dynamic\nset logscale x 2\nset xlabel 'size (bytes)'\n"
    << "set key left top\nset grid\n";
  std::vector<std::string> svgs;
  for (size_t i = 0; i < series.size(); ++i) {
    const PlotSeries& p = series[i];
    d << "# " << i << " " << p.title << "\n# bytes measured fitted simulated\n";
    for (size_t k = 0; k < p.bytes.size(); ++k) {
      d << p.bytes[k] << " " << p.measured[k] << " " << p.fitted[k] << " "
        << (std::isnan(p.simulated[k]) ? std::string("NaN") : std::to_string(p.simulated[k]))
        << "\n";
    }
    d << "\n\n";
    svgs.push_back(stem.string() + "-" + std::to_string(i) + ".svg");
    if (!p.bytes.empty()) g << "set xtics (" << size_ticks(p.bytes) << ")\n";
    g << "set output '" << svgs.back() << "'\nset title \"" << p.title
      << "\" noenhanced\nset ylabel '" << p.ylabel << "'\nplot '" << dat << "' index " << i
      << " using 1:2 with points pt 7 title 'measured', '' index " << i
      << " using 1:3 with lines lw 2 title 'fitted'";
    bool simulated = false;
    for (double v : p.simulated) simulated |= !std::isnan(v);
    if (simulated) g << ", '' index " << i << " using 1:4 with linespoints title 'simulated'";
    g << "\n";
  }
  try {
    write_output_file(dat, d.str());
    write_output_file(gp, g.str());
  } catch (const OutputError& e) {  // a script without its data draws nothing
    failures.push_back(e);
    remove_output_file(dat);
    remove_output_file(gp);
    return "";
  }
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    return gp + " (gnuplot not found: run `gnuplot " + gp + "` to draw the SVGs)";
  }
  const std::string cmd = "gnuplot '" + gp + "' 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) {
    for (const std::string& svg : svgs) remove_output_file(svg);  // perhaps half drawn
    return gp + " (gnuplot failed on it)";
  }
  return gp + ", " + stem.string() + "-*.svg";
}

}  // namespace

CalibrateFiles check_calibrate_out(const std::string& out_text) {
  const std::filesystem::path out(out_text);
  const std::string where = "--out " + out_text;
  struct stat st {};
  if (::stat(out_text.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    throw ConfigError(where, 0, 0, "",
                      std::string("is ") + file_kind(st.st_mode) +
                          ", not a file: expected the path of the YAML fragment to write (e.g. "
                          "cal.yaml), with FILE.report.json and the plots beside it");
  }
  CalibrateFiles files{out, out.parent_path() / (out.stem().string() + ".report.json"),
                       out.parent_path() / out.stem()};
  std::error_code ec;
  if (!out.parent_path().empty()) std::filesystem::create_directories(out.parent_path(), ec);
  for (const std::filesystem::path& p : {files.yaml, files.report}) {
    try {
      check_output_file(p.string());
    } catch (const OutputError& e) {
      throw ConfigError(where, 0, 0, "", "cannot write " + p.string() + ": " + e.reason());
    }
  }
  return files;
}

CalibrateWritten write_calibrate_outputs(const CalibrateFiles& files, std::string yaml,
                                         const std::string& report_json,
                                         const std::vector<PlotSeries>& plots) {
  CalibrateWritten w;
  try {
    write_output_file(files.report.string(), report_json);
    w.wrote = files.report.string();
  } catch (const OutputError& e) {
    w.failures.push_back(e);
    remove_output_file(files.report.string());  // an earlier calibration's is not this one's
    const std::string line = "# report: " + files.report.string() + "\n";
    if (const size_t at = yaml.find(line); at != std::string::npos) {
      yaml.replace(
          at, line.size(),
          "# report: " + files.report.string() + " could not be written (" + e.reason() + ")\n");
    }
  }
  try {
    write_output_file(files.yaml.string(), yaml);
    w.wrote = files.yaml.string() + (w.wrote.empty() ? "" : ", " + w.wrote);
  } catch (const OutputError& e) {
    w.failures.push_back(e);
    remove_output_file(files.yaml.string());
  }
  const std::string plotted = write_plots(files.plot_stem, plots, w.failures);
  if (!plotted.empty()) w.wrote += (w.wrote.empty() ? "" : ", ") + plotted;
  return w;
}

}  // namespace fabricsim
