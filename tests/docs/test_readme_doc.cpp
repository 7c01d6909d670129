// The README checker on small READMEs of its own: a stale number in a region or in prose is
// found and named with its line; slow regions are skipped and counted; wall-clock fields are
// not compared. The "fresh" outputs come from printf commands written here, or from the real
// binary where tests/cli/test_cli.cpp pins the line (the quickstart's bisection bandwidth).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "readme_doc.hpp"

namespace fs = std::filesystem;
using namespace fabricsim::docs;

namespace {

/// A fresh folder under the system's temporary directory, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "test_readme_doc.XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Runs `readme` through the real shell runner; `binary` stands for fabricsim.
Outcome check(const TempDir& dir, const std::string& readme, const fs::path& binary,
              Options options = {true, false, ""}) {
  write(dir.path / "README.md", readme);
  ShellRunner shell(dir.path, binary, FABRICSIM_README_DOC);
  return regenerate(parse(readme), shell, options);
}

struct Run {
  int exit_code;
  std::string out;
};

Run run_tool(const std::string& args) {
  TempDir out_dir;
  const fs::path out = out_dir.path / "out.txt";
  const std::string cmd =
      std::string("'") + FABRICSIM_README_DOC + "' " + args + " >'" + out.string() + "' 2>&1";
  const int raw = std::system(cmd.c_str());
  return {WEXITSTATUS(raw), read(out)};
}

}  // namespace

TEST_CASE("parse: regions, their flags, value definitions and uses") {
  const std::string readme =
      "# title\n"
      "<!-- doc table slow code: fabricsim run a.yaml |\n"
      "  sed -n 1,3p -->\n"
      "old\n"
      "<!-- /doc table -->\n"
      "Prose says <!--v p.busbw-->46.9<!--/v--> GB/s and <!--v p.busbw-->46.9<!--/v--> again.\n"
      "<!-- doc-values\n"
      "# a comment\n"
      "p.busbw: printf 46.9\n"
      "p.two: echo a |\n"
      "  tr a b\n"
      "-->\n"
      "<!--v p.two-->b<!--/v-->\n"
      "Shown, not checked: `<!--v ID-->1<!--/v-->` and\n"
      "```\n"
      "<!-- doc x: echo -->\n"
      "```\n";
  const Document d = parse(readme);
  REQUIRE(d.regions.size() == 1);
  CHECK(d.regions[0].id == "table");
  CHECK(d.regions[0].slow);
  CHECK(d.regions[0].code);
  CHECK_FALSE(d.regions[0].prompt);
  CHECK(d.regions[0].command == "fabricsim run a.yaml |\n  sed -n 1,3p");
  CHECK(d.regions[0].marker_line == 2);
  CHECK(readme.substr(d.regions[0].body_begin, d.regions[0].body_end - d.regions[0].body_begin) ==
        "old\n");
  REQUIRE(d.defs.size() == 2);
  CHECK(d.defs[0].id == "p.busbw");
  CHECK(d.defs[0].line == 9);
  CHECK(d.defs[1].command == "echo a |\n  tr a b");  // indented lines continue a definition
  REQUIRE(d.uses.size() == 3);
  CHECK(readme.substr(d.uses[1].begin, d.uses[1].end - d.uses[1].begin) == "46.9");
  CHECK(d.uses[1].line == 6);
}

TEST_CASE("parse: a marker it cannot read is an error naming its line") {
  auto line_of = [](const std::string& readme) -> std::size_t {
    try {
      parse(readme);
    } catch (const MarkerError& e) {
      return e.line;
    }
    return 0;
  };
  CHECK(line_of("a\n<!-- doc t: echo 1 -->\nbody\n") == 2);  // never closed
  CHECK(line_of("<!-- doc t: echo 1 -->\n<!-- /doc u -->\n<!-- /doc t -->\n") == 2);
  CHECK(line_of("x\n\n<!-- /doc t -->\n") == 3);                        // closes nothing
  CHECK(line_of("<!-- doc t fast: echo -->\n<!-- /doc t -->\n") == 1);  // unknown flag
  CHECK(line_of("<!-- doc t echo -->\n<!-- /doc t -->\n") == 1);        // no ':'
  CHECK(line_of("a\nsays <!--v x-->1<!--/v-->\n") == 2);                // undefined value
  CHECK(line_of("<!-- doc-values\nx: echo 1\n-->\n") == 2);             // never used
  CHECK(line_of("says <!--v x-->1\n") == 1);                            // not closed
  CHECK(line_of("<!-- doc t: a -->\n<!-- /doc t -->\n<!-- doc t: a -->\n<!-- /doc t -->\n") ==
        3);  // twice
}

TEST_CASE("check: a stale number in a region is found, named with its line, and fixed") {
  TempDir dir;
  const std::string readme =
      "# fake\n"
      "\n"
      "<!-- doc table: printf '| size | busbw |\\n| 8192 | 0.50 |\\n| 262144 | 9.54 |\\n' -->\n"
      "| size | busbw |\n"
      "| 8192 | 0.50 |\n"
      "| 262144 | 9.45 |\n"
      "<!-- /doc table -->\n";
  const Outcome o = check(dir, readme, "/bin/false");
  CHECK(o.errors.empty());
  REQUIRE(o.stale.size() == 1);
  CHECK(o.stale[0].id == "table");
  CHECK(o.stale[0].line == 6);  // the line with the stale number
  CHECK(o.stale[0].message ==
        "region 'table' (marker at line 3) is not what its command prints now");
  CHECK(o.regions_checked == 1);
  CHECK(o.text.find("| 262144 | 9.54 |\n<!-- /doc table -->") != std::string::npos);
  CHECK(o.text.find("9.45") == std::string::npos);
}

TEST_CASE("check: a stale number in prose is found at its line") {
  TempDir dir;
  const std::string readme =
      "The ring gets <!--v qs.ring-->46.9<!--/v--> GB/s.\n"
      "Again: <!--v qs.ring-->46.8<!--/v--> GB/s.\n"
      "<!-- doc-values\n"
      "qs.ring: printf '%.1f\\n' 46.94\n"
      "-->\n";
  const Outcome o = check(dir, readme, "/bin/false");
  CHECK(o.errors.empty());
  REQUIRE(o.stale.size() == 1);
  CHECK(o.stale[0].line == 2);
  CHECK(o.stale[0].message == "value 'qs.ring' says '46.8'; the build gives '46.9'");
  CHECK(o.text.find("Again: <!--v qs.ring-->46.9<!--/v-->") != std::string::npos);
}

TEST_CASE("check: slow regions and values are skipped and counted, and --only runs them") {
  TempDir dir;
  const std::string readme =
      "<!-- doc big slow: printf 'new\\n' -->\n"
      "old\n"
      "<!-- /doc big -->\n"
      "<!--v big.n-->1<!--/v--> and <!--v n-->2<!--/v-->\n"
      "<!-- doc-values\n"
      "big.n slow: echo 3\n"
      "n: region big | tr -d '\\n'\n"
      "-->\n";
  const Outcome o = check(dir, readme, "/bin/false");
  CHECK(o.slow_regions_skipped == 1);
  CHECK(o.slow_values_skipped == 1);
  CHECK(o.regions_checked == 0);
  CHECK(o.values_checked == 1);
  // The fast value reads the slow region as the README has it.
  REQUIRE(o.stale.size() == 1);
  CHECK(o.stale[0].message == "value 'n' says '2'; the build gives 'old'");

  const Outcome only = check(dir, readme, "/bin/false", {false, false, "big"});
  CHECK(only.regions_checked == 1);
  CHECK(only.values_checked == 1);  // big.n
  CHECK(only.values_skipped == 1);  // n
  CHECK(only.text.find("<!-- doc big slow: printf 'new\\n' -->\nnew\n") == 0);
  CHECK(only.text.find("<!--v big.n-->3<!--/v-->") != std::string::npos);
}

TEST_CASE("check: wall-clock fields are not compared, and keep the README's text") {
  TempDir dir;
  const std::string readme =
      "<!-- doc t: echo '# time       : simulated 22419.104 us, wall 2.33 s, 40253298 events "
      "(17.24 M events/s, 8.60 M packet-hops/s)' -->\n"
      "# time       : simulated 22419.104 us, wall 3.07 s, 40253298 events (13.12 M events/s, "
      "6.54 M packet-hops/s)\n"
      "<!-- /doc t -->\n";
  const Outcome same = check(dir, readme, "/bin/false");
  CHECK(same.stale.empty());
  CHECK(same.text == readme);
  // The event count is deterministic: it is compared, and the rewritten line is the build's.
  std::string changed = readme;
  changed.replace(changed.rfind("40253298"), 8, "40253299");
  const Outcome stale = check(dir, changed, "/bin/false");
  CHECK(stale.stale.size() == 1);
  CHECK(stale.text.find("wall 2.33 s, 40253298 events") != std::string::npos);

  // A stale line beside a wall-clock one: the wall-clock line keeps the README's text.
  const std::string two =
      "<!-- doc t: printf 'busbw 46.84\\nwall 2.33 s\\n' -->\n"
      "busbw 46.94\n"
      "wall 3.07 s\n"
      "<!-- /doc t -->\n";
  const Outcome o2 = check(dir, two, "/bin/false");
  REQUIRE(o2.stale.size() == 1);
  CHECK(o2.stale[0].line == 2);
  CHECK(o2.text.find("busbw 46.84\nwall 3.07 s\n") != std::string::npos);
}

TEST_CASE("check: a fabricsim that fails, or a failing pipeline, is an error, not a pass") {
  TempDir dir;
  // A stand-in binary: exits 2 (bad input) for `bad`, 3 (deadlock) otherwise, printing its
  // arguments, and counts its runs.
  const fs::path bin = dir.path / "fake-fabricsim";
  write(bin, "#!/bin/sh\necho run >> '" + (dir.path / "runs").string() +
                 "'\necho \"args $*\"\n[ \"$1\" = bad ] && exit 2\nexit 3\n");
  fs::permissions(bin, fs::perms::owner_all);
  const Outcome ok = check(dir,
                           "<!-- doc a: fabricsim run x; fabricsim run x -->\n"
                           "args run x\nargs run x\n"
                           "<!-- /doc a -->\n",
                           bin);
  CHECK(ok.errors.empty());  // exit 3 is a result (a deadlock), not a failure
  CHECK(ok.stale.empty());
  CHECK(read(dir.path / "runs") == "run\n");  // the same arguments ran once
  const Outcome bad =
      check(dir, "<!-- doc a: fabricsim bad | sed 1d -->\nx\n<!-- /doc a -->\n", bin);
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.errors[0].message.find("fabricsim bad: exit 2") != std::string::npos);
  const Outcome awk = check(dir, "<!-- doc a: echo 1 | awk '{' -->\nx\n<!-- /doc a -->\n", bin);
  CHECK(awk.errors.size() == 1);
}

TEST_CASE("render: the code fence and the prompt line") {
  Region r;
  r.command = "fabricsim topo a.yaml --partitions 4 | awk '/^part/ || /a|b/'";
  r.code = r.prompt = true;
  CHECK(render_body(r, "x  \ny\n\n\n") ==
        "```\n$ ./build/fabricsim topo a.yaml --partitions 4\nx\ny\n```\n");
}

TEST_CASE("json: values by path, every element with [*]") {
  TempDir dir;
  write(dir.path / "r.json",
        R"({"deadlock": {"detected_at_ps": 248021760, "cycle": ["a:1:3", "b:2:3"]},
            "collectives": [{"time_us": 1.5}, {"time_us": 2}]})");
  CHECK(json_lookup(dir.path / "r.json", "deadlock.detected_at_ps") == "248021760\n");
  CHECK(json_lookup(dir.path / "r.json", "deadlock.cycle[1]") == "b:2:3\n");
  CHECK(json_lookup(dir.path / "r.json", "collectives[*].time_us") == "1.5\n2\n");
  CHECK_THROWS_WITH(json_lookup(dir.path / "r.json", "deadlock.cycles"),
                    Catch::Contains("no key deadlock.cycles"));
}

TEST_CASE("readme_doc --check: a stale number in a real fabricsim region fails with its diff") {
  // The quickstart's topo line, pinned by tests/cli/test_cli.cpp, with 3.2 Tb/s made 3.3.
  TempDir dir;
  fs::create_directory_symlink(fs::path(FABRICSIM_SOURCE_DIR) / "scenarios",
                               dir.path / "scenarios");
  fs::create_directory_symlink(fs::path(FABRICSIM_SOURCE_DIR) / "configs", dir.path / "configs");
  const std::string readme =
      "# fake\n"
      "<!-- doc topo code: fabricsim topo scenarios/quickstart.yaml | grep '^bisection' -->\n"
      "```\n"
      "bisection bandwidth : 3.3 Tb/s (closed form), 3.2 Tb/s (max-flow check)\n"
      "```\n"
      "<!-- /doc topo -->\n";
  write(dir.path / "README.md", readme);
  const std::string args = "--check --bin '" + std::string(FABRICSIM_BINARY) + "' '" +
                           (dir.path / "README.md").string() + "'";
  const Run stale = run_tool(args);
  INFO(stale.out);
  CHECK(stale.exit_code == 1);
  CHECK(stale.out.find("README.md:4: region 'topo' (marker at line 2) is not what its command "
                       "prints now") != std::string::npos);
  CHECK(stale.out.find("\n-bisection bandwidth : 3.3 Tb/s (closed form), 3.2 Tb/s (max-flow "
                       "check)\n+bisection bandwidth : 3.2 Tb/s (closed form), 3.2 Tb/s "
                       "(max-flow check)\n") != std::string::npos);
  CHECK(read(dir.path / "README.md") == readme);  // --check writes nothing

  // Without --check it rewrites the file, after which the check passes.
  const Run regen = run_tool("--bin '" + std::string(FABRICSIM_BINARY) + "' '" +
                             (dir.path / "README.md").string() + "'");
  CHECK(regen.exit_code == 0);
  CHECK(read(dir.path / "README.md").find("3.3") == std::string::npos);
  CHECK(run_tool(args).exit_code == 0);
}

TEST_CASE("readme_doc: README.md and docs/*.md are checked together, ids unique across them") {
  TempDir dir;
  fs::create_directory(dir.path / "docs");
  // Region `n` in the README prints 4; the docs page reads it (`region n`) and says 5.
  write(dir.path / "README.md", "# top\n<!-- doc n: echo 4 -->\n4\n<!-- /doc n -->\n");
  const std::string page =
      "# page\n"
      "n is <!--v page.n-->5<!--/v-->.\n"
      "<!-- doc-values\n"
      "page.n: region n\n"
      "-->\n";
  write(dir.path / "docs" / "page.md", page);
  const std::string files = " '" + (dir.path / "README.md").string() + "' '" +
                            (dir.path / "docs" / "page.md").string() + "'";
  const std::string bin =
      "--bin '" + std::string(FABRICSIM_BINARY) + "' --top '" + dir.path.string() + "'";
  const Run stale = run_tool("--check " + bin + files);
  INFO(stale.out);
  CHECK(stale.exit_code == 1);
  CHECK(stale.out.find("docs/page.md:2: value 'page.n' says '5'; the build gives '4'") !=
        std::string::npos);
  CHECK(stale.out.find("1 regions and 1 values rerun in 2 files") != std::string::npos);
  CHECK(run_tool(bin + files).exit_code == 0);  // rewritten
  CHECK(read(dir.path / "docs" / "page.md").find("<!--v page.n-->4<!--/v-->") != std::string::npos);
  CHECK(run_tool("--check " + bin + files).exit_code == 0);

  // The same region id in two files is an error naming both places.
  write(dir.path / "docs" / "page.md", "# page\n<!-- doc n: echo 4 -->\n4\n<!-- /doc n -->\n");
  const Run twice = run_tool("--check " + bin + files);
  INFO(twice.out);
  CHECK(twice.exit_code == 2);
  CHECK(twice.out.find("docs/page.md:2: region 'n' is also at README.md:2") != std::string::npos);
}
