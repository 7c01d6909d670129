#include "readme_doc.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

namespace fabricsim::docs {
namespace fs = std::filesystem;

MarkerError::MarkerError(std::size_t l, const std::string& m, const std::string& file)
    : std::runtime_error(file + ":" + std::to_string(l) + ": " + m), line(l), message(m) {}

namespace {

const std::string kRegionOpen = "<!-- doc ";
const std::string kRegionClose = "<!-- /doc ";
const std::string kValuesOpen = "<!-- doc-values";
const std::string kUseOpen = "<!--v ";
const std::string kUseClose = "<!--/v-->";

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool valid_id(const std::string& id) {
  if (id.empty()) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
  });
}

struct Line {
  std::size_t begin;  // offset of the first character
  std::size_t end;    // offset just past the '\n' (or the text's end)
  std::string text;   // without the '\n'
};

std::vector<Line> split_lines(const std::string& text) {
  std::vector<Line> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto nl = text.find('\n', pos);
    const std::size_t end = nl == std::string::npos ? text.size() : nl + 1;
    lines.push_back(
        {pos, end, text.substr(pos, (nl == std::string::npos ? text.size() : nl) - pos)});
    pos = end;
  }
  return lines;
}

/// "ID flag flag: COMMAND" -> id, flags, command.
void parse_header(const std::string& header, std::size_t line, std::string& id,
                  std::vector<std::string>& flags, std::string& command) {
  const auto colon = header.find(':');
  if (colon == std::string::npos)
    throw MarkerError(line, "a marker is `ID [flags]: COMMAND`; no ':' in '" + header + "'");
  std::istringstream words(header.substr(0, colon));
  if (!(words >> id) || !valid_id(id))
    throw MarkerError(
        line, "a marker's id is made of a-z 0-9 - . _; got '" + header.substr(0, colon) + "'");
  for (std::string w; words >> w;) flags.push_back(w);
  command = trim(header.substr(colon + 1));
  if (command.empty()) throw MarkerError(line, "marker '" + id + "' has no command");
}

/// The first stage of a pipeline, outside quotes.
std::string first_stage(const std::string& command) {
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"')
        ++i;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\\') {
      ++i;
    } else if (c == '|' && (i + 1 >= command.size() || command[i + 1] != '|')) {
      return trim(command.substr(0, i));
    }
  }
  return trim(command);
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

bool selected(const std::string& id, const Options& o) {
  return o.only.empty() || id == o.only || id.rfind(o.only + ".", 0) == 0;
}

}  // namespace

namespace {

Document parse_markers(const std::string& text) {
  Document doc;
  doc.text = text;
  const auto lines = split_lines(text);
  std::set<std::string> region_ids;
  std::map<std::string, std::size_t> def_lines;
  bool in_fence = false;  // inside a ``` block of prose: markers there are examples
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i].text;
    const std::size_t lineno = i + 1;
    if (trim(l).rfind("```", 0) == 0) in_fence = !in_fence;
    if (in_fence) continue;
    if (l.rfind(kValuesOpen, 0) == 0) {
      if (trim(l) != kValuesOpen)
        throw MarkerError(lineno, "`<!-- doc-values` stands alone on its line");
      std::size_t j = i + 1;
      for (; j < lines.size() && trim(lines[j].text) != "-->"; ++j) {
        std::string def = lines[j].text;
        const std::size_t def_line = j + 1;
        if (trim(def).empty() || trim(def)[0] == '#') continue;
        // Indented lines continue the definition (the command goes on over lines).
        while (j + 1 < lines.size() && !lines[j + 1].text.empty() &&
               (lines[j + 1].text[0] == ' ' || lines[j + 1].text[0] == '\t') &&
               trim(lines[j + 1].text) != "-->") {
          ++j;
          def += "\n" + lines[j].text;
        }
        ValueDef v;
        std::vector<std::string> flags;
        parse_header(def, def_line, v.id, flags, v.command);
        for (const auto& f : flags) {
          if (f != "slow") throw MarkerError(def_line, "value flag '" + f + "': only 'slow'");
          v.slow = true;
        }
        if (!def_lines.emplace(v.id, def_line).second)
          throw MarkerError(def_line, "value '" + v.id + "' is defined twice (first at line " +
                                          std::to_string(def_lines[v.id]) + ")");
        v.line = def_line;
        doc.defs.push_back(v);
      }
      if (j == lines.size()) throw MarkerError(lineno, "`<!-- doc-values` is not closed by `-->`");
      i = j;
      continue;
    }
    if (l.rfind(kRegionClose, 0) == 0)
      throw MarkerError(lineno, "`" + trim(l) + "` closes no region");
    if (l.rfind(kRegionOpen, 0) == 0) {
      std::string header = l.substr(kRegionOpen.size());
      std::size_t j = i;
      while (trim(header).size() < 3 || trim(header).substr(trim(header).size() - 3) != "-->") {
        if (++j == lines.size())
          throw MarkerError(lineno, "a region marker is not closed by `-->`");
        header += "\n" + lines[j].text;
      }
      header = trim(header);
      header.resize(header.size() - 3);
      Region r;
      std::vector<std::string> flags;
      parse_header(header, lineno, r.id, flags, r.command);
      for (const auto& f : flags) {
        if (f == "slow")
          r.slow = true;
        else if (f == "code")
          r.code = true;
        else if (f == "prompt")
          r.prompt = r.code = true;
        else
          throw MarkerError(lineno, "region flag '" + f + "': slow, code or prompt");
      }
      if (!region_ids.insert(r.id).second)
        throw MarkerError(lineno, "region '" + r.id + "' appears twice");
      r.marker_line = lineno;
      const std::string close = kRegionClose + r.id + " -->";
      std::size_t k = j + 1;
      for (; k < lines.size() && trim(lines[k].text) != close; ++k) {
        if (lines[k].text.rfind(kRegionOpen, 0) == 0 || lines[k].text.rfind(kRegionClose, 0) == 0)
          throw MarkerError(k + 1, "region '" + r.id + "' (line " + std::to_string(lineno) +
                                       ") must be closed by `" + close + "` first");
      }
      if (k == lines.size())
        throw MarkerError(lineno, "region '" + r.id + "' is not closed by `" + close + "`");
      r.body_begin = j + 1 < lines.size() ? lines[j + 1].begin : text.size();
      r.body_line = j + 2;
      r.body_end = lines[k].begin;
      doc.regions.push_back(r);
      i = k;
      continue;
    }
    for (std::size_t pos = l.find(kUseOpen); pos != std::string::npos;
         pos = l.find(kUseOpen, pos)) {
      if (pos > 0 && l[pos - 1] == '`') {  // `<!--v ID-->` in a code span: the syntax shown
        pos += kUseOpen.size();
        continue;
      }
      const auto id_end = l.find("-->", pos);
      if (id_end == std::string::npos) throw MarkerError(lineno, "`<!--v` without `-->`");
      ValueUse u;
      u.id = trim(l.substr(pos + kUseOpen.size(), id_end - pos - kUseOpen.size()));
      if (!valid_id(u.id)) throw MarkerError(lineno, "bad value id '" + u.id + "'");
      const auto close = l.find(kUseClose, id_end);
      if (close == std::string::npos)
        throw MarkerError(lineno, "value '" + u.id + "' is not closed by `<!--/v-->` on its line");
      u.begin = lines[i].begin + id_end + 3;
      u.end = lines[i].begin + close;
      u.line = lineno;
      doc.uses.push_back(u);
      pos = close + kUseClose.size();
    }
  }
  std::set<std::string> used;
  for (const auto& u : doc.uses) {
    if (!def_lines.count(u.id))
      throw MarkerError(u.line, "value '" + u.id + "' has no definition in a doc-values block");
    used.insert(u.id);
  }
  for (const auto& d : doc.defs)
    if (!used.count(d.id))
      throw MarkerError(d.line, "value '" + d.id + "' is defined but never used (<!--v " + d.id +
                                    "-->...<!--/v-->)");
  return doc;
}

}  // namespace

Document parse(const std::string& text, const std::string& file) {
  try {
    return parse_markers(text);
  } catch (const MarkerError& e) {
    throw MarkerError(e.line, e.message, file);
  }
}

void check_unique_ids(const std::vector<Document>& docs, const std::vector<std::string>& names) {
  std::map<std::string, std::string> regions, values;  // id -> "FILE:LINE" of its first use
  for (std::size_t i = 0; i < docs.size(); ++i) {
    for (const auto& r : docs[i].regions) {
      const std::string at = names[i] + ":" + std::to_string(r.marker_line);
      if (!regions.emplace(r.id, at).second)
        throw MarkerError(r.marker_line,
                          "region '" + r.id + "' is also at " + regions[r.id] +
                              " (ids are unique across README.md and docs/)",
                          names[i]);
    }
    for (const auto& d : docs[i].defs) {
      const std::string at = names[i] + ":" + std::to_string(d.line);
      if (!values.emplace(d.id, at).second)
        throw MarkerError(d.line,
                          "value '" + d.id + "' is also defined at " + values[d.id] +
                              " (ids are unique across README.md and docs/)",
                          names[i]);
    }
  }
}

std::string mask_wall_clock(const std::string& text) {
  static const std::regex wall(R"(wall [0-9]+(\.[0-9]+)? s)");
  static const std::regex rates(
      R"([0-9]+(\.[0-9]+)? M events/s, [0-9]+(\.[0-9]+)? M packet-hops/s)");
  return std::regex_replace(std::regex_replace(text, wall, "wall (wall clock) s"), rates,
                            "(rate) M events/s, (rate) M packet-hops/s");
}

std::string render_body(const Region& region, const std::string& output) {
  std::vector<std::string> lines;
  std::istringstream in(output);
  for (std::string l; std::getline(in, l);) {
    const auto e = l.find_last_not_of(" \t\r");
    lines.push_back(e == std::string::npos ? "" : l.substr(0, e + 1));
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::string body;
  if (region.code) body += "```\n";
  if (region.prompt) {
    std::string shown = first_stage(region.command);
    if (shown.rfind("fabricsim ", 0) == 0) shown = "./build/" + shown;
    body += "$ " + shown + "\n";
  }
  for (const auto& l : lines) body += l + "\n";
  if (region.code) body += "```\n";
  return body;
}

Outcome regenerate(const Document& doc, Runner& runner, const Options& options) {
  Outcome o;
  struct Edit {
    std::size_t begin, end;
    std::string text;
  };
  std::vector<Edit> edits;
  // --only picks slow markers explicitly, even in a check.
  const bool skip_slow = (options.check || options.skip_slow) && options.only.empty();
  for (const auto& r : doc.regions) {
    const std::string old_body = doc.text.substr(r.body_begin, r.body_end - r.body_begin);
    std::string body = old_body;
    if (!selected(r.id, options)) {
      ++o.regions_skipped;
    } else if (skip_slow && r.slow) {
      ++o.regions_skipped;
      ++o.slow_regions_skipped;
    } else {
      ++o.regions_checked;
      const CommandResult res = runner.run(r.command);
      const std::string fresh = render_body(r, res.out);
      if (res.status != 0) {
        o.errors.push_back({r.id, r.marker_line,
                            "region '" + r.id + "': the command failed (status " +
                                std::to_string(res.status) + "):\n" + res.err});
      } else if (res.out.find_first_not_of(" \t\r\n") == std::string::npos) {
        o.errors.push_back({r.id, r.marker_line,
                            "region '" + r.id + "': the command printed nothing:\n" + res.err});
      } else if (mask_wall_clock(fresh) != mask_wall_clock(old_body)) {
        // Lines that differ only in wall-clock fields keep the README's text, so the diff
        // shows what moved.
        const auto old_lines = split_lines(old_body);
        const auto new_lines = split_lines(fresh);
        body.clear();
        std::size_t first_diff = 0;
        for (std::size_t k = 0; k < new_lines.size(); ++k) {
          const bool kept = k < old_lines.size() && mask_wall_clock(old_lines[k].text) ==
                                                        mask_wall_clock(new_lines[k].text);
          body += (kept ? old_lines[k].text : new_lines[k].text) + "\n";
          if (!first_diff && (k >= old_lines.size() || !kept)) first_diff = k + 1;
        }
        if (!first_diff) first_diff = new_lines.size() + 1;  // the README has lines more
        o.stale.push_back({r.id, r.body_line + first_diff - 1,
                           "region '" + r.id + "' (marker at line " +
                               std::to_string(r.marker_line) +
                               ") is not what its command prints now"});
        edits.push_back({r.body_begin, r.body_end, body});
      }
    }
    runner.publish(r.id, body);
  }
  std::map<std::string, std::vector<const ValueUse*>> uses;
  for (const auto& u : doc.uses) uses[u.id].push_back(&u);
  for (const auto& d : doc.defs) {
    if (!selected(d.id, options)) {
      ++o.values_skipped;
      continue;
    }
    if (skip_slow && d.slow) {
      ++o.values_skipped;
      ++o.slow_values_skipped;
      continue;
    }
    ++o.values_checked;
    const CommandResult res = runner.run(d.command);
    const std::string value = trim(res.out);
    if (res.status != 0 || value.empty() || value.find('\n') != std::string::npos) {
      o.errors.push_back(
          {d.id, d.line,
           "value '" + d.id + "': " +
               (res.status != 0
                    ? "the command failed (status " + std::to_string(res.status) + ")"
                    : "the command must print one non-empty line, not '" + res.out + "'") +
               ":\n" + res.err});
      continue;
    }
    for (const ValueUse* u : uses[d.id]) {
      const std::string said = doc.text.substr(u->begin, u->end - u->begin);
      if (said == value) continue;
      o.stale.push_back(
          {d.id, u->line,
           "value '" + d.id + "' says '" + said + "'; the build gives '" + value + "'"});
      edits.push_back({u->begin, u->end, value});
    }
  }
  std::sort(edits.begin(), edits.end(),
            [](const Edit& a, const Edit& b) { return a.begin > b.begin; });
  o.text = doc.text;
  for (const auto& e : edits) o.text.replace(e.begin, e.end - e.begin, e.text);
  return o;
}

ShellRunner::ShellRunner(fs::path root, fs::path binary, fs::path tool) {
  std::string tmpl = (fs::temp_directory_path() / "readme_doc.XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a scratch folder");
  scratch_ = tmpl;
  const char* keep = std::getenv("FABRICSIM_DOC_KEEP");
  keep_ = keep && std::string(keep) == "1";
  root = fs::absolute(root);
  fs::create_directories(scratch_ / "top");
  fs::create_directories(scratch_ / "state" / "cache");
  fs::create_directories(scratch_ / "state" / "regions");
  for (const auto& e : fs::directory_iterator(root)) {
    const auto name = e.path().filename();
    if (name == "out") continue;
    fs::create_directory_symlink(e.path(), scratch_ / "top" / name);
  }
  const fs::path state = scratch_ / "state";
  std::string prelude =
      "set -o pipefail\n"
      "export LC_ALL=C\n"
      "for v in $(compgen -e); do case $v in NCCL_*) unset \"$v\";; esac; done\n"
      "export FABRICSIM_DOC_BIN=" +
      shell_quote(fs::absolute(binary).string()) +
      "\n"
      "export FABRICSIM_DOC_TOOL=" +
      shell_quote(fs::absolute(tool).string()) +
      "\n"
      "export FABRICSIM_DOC_STATE=" +
      shell_quote(state.string()) +
      "\n"
      R"(# fabricsim: the build's binary, each distinct command line run once.
fabricsim() {
  local key c s
  key=$(printf '%s\0' "$PWD" "$@" | sha1sum | cut -c1-20)
  c="$FABRICSIM_DOC_STATE/cache/$key"
  if [ ! -e "$c.status" ]; then
    "$FABRICSIM_DOC_BIN" "$@" >"$c.out" 2>"$c.err"
    echo $? >"$c.status"
  fi
  cat "$c.out"
  cat "$c.err" >&2
  s=$(cat "$c.status")
  case $s in
    0|3|4) return 0 ;;
    *) printf 'fabricsim %s: exit %s\n' "$*" "$s" >>"$FABRICSIM_DOC_STATE/failed"; return "$s" ;;
  esac
}
# region ID: the README's text of region ID as this run leaves it.
region() {
  cat "$FABRICSIM_DOC_STATE/regions/$1" 2>/dev/null ||
    { printf 'region %s: no such region before this marker\n' "$1" >>"$FABRICSIM_DOC_STATE/failed"; return 1; }
}
# json FILE PATH: a value of a JSON file (a.b[2].c; [*] for every element).
json() {
  "$FABRICSIM_DOC_TOOL" --json "$@" ||
    { printf 'json %s: failed\n' "$*" >>"$FABRICSIM_DOC_STATE/failed"; return 1; }
}
export -f fabricsim region json
)";
  const fs::path lib = root / "scripts" / "docs" / "lib.sh";
  if (fs::exists(lib)) prelude += ". " + shell_quote(lib.string()) + "\n";
  prelude += "cd " + shell_quote((scratch_ / "top").string()) + " || exit 1\n";
  spit(state / "prelude.sh", prelude);
}

ShellRunner::~ShellRunner() {
  if (keep_) return;
  std::error_code ec;
  // The symlinks first, so nothing below them is ever walked.
  for (const auto& e : fs::directory_iterator(scratch_ / "top", ec)) fs::remove(e.path(), ec);
  fs::remove_all(scratch_, ec);
}

CommandResult ShellRunner::run(const std::string& command) {
  const fs::path state = scratch_ / "state";
  spit(state / "command.sh",
       ". " + shell_quote((state / "prelude.sh").string()) + "\n" + command + "\n");
  spit(state / "failed", "");
  const std::string sh = "bash --noprofile --norc " + shell_quote((state / "command.sh").string()) +
                         " </dev/null >" + shell_quote((state / "out").string()) + " 2>" +
                         shell_quote((state / "err").string());
  const int raw = std::system(sh.c_str());
  CommandResult r;
  r.out = slurp(state / "out");
  r.err = slurp(state / "err");
  r.status = raw == -1 ? 1 : WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  const std::string failed = slurp(state / "failed");
  if (!failed.empty()) {
    r.err = failed + r.err;
    if (r.status == 0) r.status = 1;
  }
  return r;
}

void ShellRunner::publish(const std::string& region_id, const std::string& body) {
  spit(scratch_ / "state" / "regions" / region_id, body);
}

std::string json_lookup(const fs::path& file, const std::string& path) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  const nlohmann::json root = nlohmann::json::parse(in);
  // Tokens: names and [n] / [*].
  std::vector<const nlohmann::json*> at{&root};
  std::size_t pos = 0;
  while (pos < path.size()) {
    if (path[pos] == '.') ++pos;
    std::vector<const nlohmann::json*> next;
    if (path[pos] == '[') {
      const auto close = path.find(']', pos);
      if (close == std::string::npos) throw std::runtime_error("unclosed [ in " + path);
      const std::string index = path.substr(pos + 1, close - pos - 1);
      for (const auto* j : at) {
        if (!j->is_array()) throw std::runtime_error(path.substr(0, pos) + " is not an array");
        if (index == "*") {
          for (const auto& e : *j) next.push_back(&e);
        } else {
          const std::size_t n = std::stoul(index);
          if (n >= j->size())
            throw std::runtime_error(path.substr(0, close + 1) + ": no such index");
          next.push_back(&(*j)[n]);
        }
      }
      pos = close + 1;
    } else {
      const auto stop = path.find_first_of(".[", pos);
      const std::string key = path.substr(pos, stop == std::string::npos ? stop : stop - pos);
      for (const auto* j : at) {
        if (!j->is_object() || !j->contains(key))
          throw std::runtime_error(file.string() + ": no key " + path.substr(0, stop));
        next.push_back(&(*j)[key]);
      }
      pos = stop == std::string::npos ? path.size() : stop;
    }
    at = std::move(next);
  }
  std::string out;
  for (const auto* j : at) out += (j->is_string() ? j->get<std::string>() : j->dump()) + "\n";
  return out;
}

}  // namespace fabricsim::docs
