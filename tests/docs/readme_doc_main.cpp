// readme_doc: reruns the generated regions and checked values of README.md and docs/*.md
// (readme_doc.hpp).
//
//   readme_doc --bin FABRICSIM [--check] [--skip-slow] [--only ID] [--verbose] [--top DIR]
//              FILE...
//       rewrite each FILE in place (or, with --check, exit 1 with a unified diff of each that
//       differs); the files are read in the order given, with ids unique across them, so a
//       value may read a region of an earlier file (`region ID`); the commands run from DIR
//       (default: the first file's folder), the top folder of the repository
//   readme_doc --json FILE PATH    print a value of a JSON file (the markers' `json`)
//
// Exit codes: 0 up to date (or rewritten), 1 stale (--check) or a command failed, 2 bad
// usage or an unreadable marker.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "readme_doc.hpp"

namespace fs = std::filesystem;
using namespace fabricsim::docs;

namespace {

int usage() {
  std::cerr << "usage: readme_doc --bin FABRICSIM [--check] [--skip-slow] [--only ID] [--verbose] "
               "[--top DIR] FILE...\n"
               "       readme_doc --json FILE PATH\n";
  return 2;
}

/// Runner that says how long each command took.
class TimedRunner : public Runner {
 public:
  TimedRunner(Runner& inner, bool verbose) : inner_(inner), verbose_(verbose) {}
  CommandResult run(const std::string& command) override {
    const auto t0 = std::chrono::steady_clock::now();
    CommandResult r = inner_.run(command);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (verbose_)
      std::fprintf(stderr, "readme_doc: %6.2f s  %.90s\n", s,
                   command.substr(0, command.find('\n')).c_str());
    return r;
  }
  void publish(const std::string& id, const std::string& body) override {
    inner_.publish(id, body);
  }

 private:
  Runner& inner_;
  bool verbose_;
};

/// `diff -u` of a file against what it should be, labelled with `name`.
void print_diff(const fs::path& readme, const std::string& name, const std::string& fresh) {
  char tmpl[] = "/tmp/readme_doc_fresh.XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd < 0) return;
  close(fd);
  {
    std::ofstream out(tmpl, std::ios::binary);
    out << fresh;
  }
  std::fflush(stdout);
  const std::string cmd = "diff -u --label '" + name + " (in the repository)' --label '" + name +
                          " (from the current build)' '" + readme.string() + "' '" + tmpl + "'";
  [[maybe_unused]] const int rc = std::system(cmd.c_str());
  std::remove(tmpl);
}

std::string slurp(const fs::path& p, bool& ok) {
  std::ifstream in(p, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// `file` as its path under `top` when it is inside it ("docs/mpi.md"), else as given.
std::string display_name(const fs::path& file, const fs::path& top) {
  const fs::path rel = fs::absolute(file).lexically_normal().lexically_relative(top);
  const std::string r = rel.string();
  return r.empty() || r.rfind("..", 0) == 0 ? file.string() : r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--json") {
    try {
      std::cout << json_lookup(argv[2], argv[3]);
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "json: " << e.what() << "\n";
      return 1;
    }
  }
  Options options;
  fs::path binary, top;
  std::vector<fs::path> files;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--check")
      options.check = true;
    else if (a == "--skip-slow")
      options.skip_slow = true;
    else if (a == "--verbose")
      verbose = true;
    else if (a == "--only" && i + 1 < argc)
      options.only = argv[++i];
    else if (a == "--bin" && i + 1 < argc)
      binary = argv[++i];
    else if (a == "--top" && i + 1 < argc)
      top = argv[++i];
    else if (!a.empty() && a[0] != '-')
      files.push_back(a);
    else
      return usage();
  }
  if (binary.empty() || files.empty()) return usage();
  if (!fs::is_regular_file(binary)) {
    std::cerr << "readme_doc: no fabricsim binary at " << binary << "\n";
    return 2;
  }
  if (top.empty()) top = fs::absolute(files[0]).parent_path();
  top = fs::absolute(top).lexically_normal();
  if (!top.has_filename()) top = top.parent_path();  // "dir/" -> "dir"
  std::vector<std::string> texts, names;
  std::vector<Document> docs;
  for (const auto& f : files) {
    bool ok = false;
    texts.push_back(slurp(f, ok));
    if (!ok) {
      std::cerr << "readme_doc: cannot read " << f << "\n";
      return 2;
    }
    names.push_back(display_name(f, top));
  }
  try {
    for (std::size_t i = 0; i < files.size(); ++i) docs.push_back(parse(texts[i], names[i]));
    check_unique_ids(docs, names);
  } catch (const MarkerError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  if (!options.only.empty()) {
    bool any = false;
    for (const auto& doc : docs) {
      for (const auto& r : doc.regions) any = any || r.id == options.only;
      for (const auto& d : doc.defs)
        any = any || d.id == options.only || d.id.rfind(options.only + ".", 0) == 0;
    }
    if (!any) {
      std::cerr << "readme_doc: --only " << options.only << ": no region or value by that id\n";
      return 2;
    }
  }
  std::vector<Outcome> outcomes;
  {
    ShellRunner shell(top, binary, fs::read_symlink("/proc/self/exe"));
    TimedRunner timed(shell, verbose);
    for (const auto& doc : docs) outcomes.push_back(regenerate(doc, timed, options));
  }
  Outcome all;
  std::size_t stale = 0;
  bool errors = false;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const Outcome& o = outcomes[i];
    for (const auto& e : o.errors)
      std::cerr << names[i] << ":" << e.line << ": " << e.message << "\n";
    for (const auto& s : o.stale)
      std::cout << names[i] << ":" << s.line << ": " << s.message
                << (options.check ? "" : " (rewritten)") << "\n";
    stale += o.stale.size();
    errors = errors || !o.errors.empty();
    all.regions_checked += o.regions_checked;
    all.values_checked += o.values_checked;
    all.regions_skipped += o.regions_skipped;
    all.values_skipped += o.values_skipped;
    all.slow_regions_skipped += o.slow_regions_skipped;
    all.slow_values_skipped += o.slow_values_skipped;
  }
  std::cout << "readme_doc: " << all.regions_checked << " regions and " << all.values_checked
            << " values rerun in " << docs.size() << (docs.size() == 1 ? " file" : " files");
  if (all.slow_regions_skipped + all.slow_values_skipped > 0)
    std::cout << "; skipped " << all.slow_regions_skipped << " slow regions and "
              << all.slow_values_skipped
              << " slow values (regenerate them by hand: bash scripts/docs/regen.sh --only ID)";
  if (!options.only.empty())
    std::cout << "; " << all.regions_skipped << " regions and " << all.values_skipped
              << " values not selected by --only";
  std::cout << "\n";
  if (options.check) {
    for (std::size_t i = 0; i < docs.size(); ++i) {
      if (outcomes[i].stale.empty()) continue;
      std::cout << "\n";
      print_diff(files[i], names[i], outcomes[i].text);
    }
    if (stale > 0)
      std::cout << "\nthe documentation differs from the current build in " << stale
                << " place(s): bash scripts/docs/regen.sh rewrites it; read the prose around "
                   "each change\n";
    return stale == 0 && !errors ? 0 : 1;
  }
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (outcomes[i].text == texts[i]) continue;
    const fs::path tmp = files[i].string() + ".tmp-" + std::to_string(getpid());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << outcomes[i].text;
      if (!out) {
        std::cerr << "readme_doc: cannot write " << tmp << "\n";
        return 1;
      }
    }
    fs::rename(tmp, files[i]);
  }
  return errors ? 1 : 0;
}
