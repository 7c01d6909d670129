// readme_doc: reruns README.md's generated regions and checked values (readme_doc.hpp).
//
//   readme_doc --bin FABRICSIM [--check] [--skip-slow] [--only ID] [--verbose] README.md
//       rewrite README.md in place (or, with --check, exit 1 with a unified diff when it
//       differs); the README's folder is the top folder the commands run from
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

#include "readme_doc.hpp"

namespace fs = std::filesystem;
using namespace fabricsim::docs;

namespace {

int usage() {
  std::cerr << "usage: readme_doc --bin FABRICSIM [--check] [--skip-slow] [--only ID] [--verbose] "
               "README.md\n"
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

/// `diff -u` of the README against what it should be, labelled with the file's name.
void print_diff(const fs::path& readme, const std::string& fresh) {
  char tmpl[] = "/tmp/readme_doc_fresh.XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd < 0) return;
  close(fd);
  {
    std::ofstream out(tmpl, std::ios::binary);
    out << fresh;
  }
  std::fflush(stdout);
  const std::string cmd = "diff -u --label '" + readme.filename().string() +
                          " (in the repository)' --label '" + readme.filename().string() +
                          " (from the current build)' '" + readme.string() + "' '" + tmpl + "'";
  [[maybe_unused]] const int rc = std::system(cmd.c_str());
  std::remove(tmpl);
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
  fs::path binary, readme;
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
    else if (!a.empty() && a[0] != '-' && readme.empty())
      readme = a;
    else
      return usage();
  }
  if (binary.empty() || readme.empty()) return usage();
  if (!fs::is_regular_file(binary)) {
    std::cerr << "readme_doc: no fabricsim binary at " << binary << "\n";
    return 2;
  }
  std::string text;
  {
    std::ifstream in(readme, std::ios::binary);
    if (!in) {
      std::cerr << "readme_doc: cannot read " << readme << "\n";
      return 2;
    }
    std::ostringstream s;
    s << in.rdbuf();
    text = s.str();
  }
  Document doc;
  try {
    doc = parse(text);
  } catch (const MarkerError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  if (!options.only.empty()) {
    bool any = false;
    for (const auto& r : doc.regions) any = any || r.id == options.only;
    for (const auto& d : doc.defs)
      any = any || d.id == options.only || d.id.rfind(options.only + ".", 0) == 0;
    if (!any) {
      std::cerr << "readme_doc: --only " << options.only << ": no region or value by that id\n";
      return 2;
    }
  }
  const fs::path top = fs::absolute(readme).parent_path();
  Outcome o;
  {
    ShellRunner shell(top, binary, fs::read_symlink("/proc/self/exe"));
    TimedRunner timed(shell, verbose);
    o = regenerate(doc, timed, options);
  }
  const std::string name = readme.filename().string();
  for (const auto& e : o.errors) std::cerr << name << ":" << e.line << ": " << e.message << "\n";
  for (const auto& s : o.stale)
    std::cout << name << ":" << s.line << ": " << s.message << (options.check ? "" : " (rewritten)")
              << "\n";
  std::cout << "readme_doc: " << o.regions_checked << " regions and " << o.values_checked
            << " values rerun";
  if (o.slow_regions_skipped + o.slow_values_skipped > 0)
    std::cout << "; skipped " << o.slow_regions_skipped << " slow regions and "
              << o.slow_values_skipped
              << " slow values (regenerate them by hand: bash scripts/docs/regen.sh --only ID)";
  if (!options.only.empty())
    std::cout << "; " << o.regions_skipped << " regions and " << o.values_skipped
              << " values not selected by --only";
  std::cout << "\n";
  if (options.check) {
    if (!o.stale.empty()) {
      std::cout << "\n";
      print_diff(readme, o.text);
      std::cout << "\n"
                << name << " differs from the current build in " << o.stale.size()
                << " place(s): bash scripts/docs/regen.sh rewrites it; read the prose around "
                   "each change\n";
    }
    return o.stale.empty() && o.errors.empty() ? 0 : 1;
  }
  if (o.text != text) {
    const fs::path tmp = readme.string() + ".tmp-" + std::to_string(getpid());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << o.text;
      if (!out) {
        std::cerr << "readme_doc: cannot write " << tmp << "\n";
        return 1;
      }
    }
    fs::rename(tmp, readme);
  }
  return o.errors.empty() ? 0 : 1;
}
