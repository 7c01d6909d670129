// YAML text -> one document's tree. The text is read twice: once as events (yaml-cpp's Parser
// with a small EventHandler: tags, depth and node count, no tree), then by YAML::Load. The
// second reading costs about as much as the first; a scenario is a page, and a large one (a
// long traffic list) is worth refusing before its tree is built rather than after.
#include "sim/config/yaml_text.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string_view>

#include "sim/config/loader.hpp"
#include "sim/core/memory_budget.hpp"

namespace fabricsim {
namespace {

/// What the events of one document say is wrong, at `mark`.
struct YamlProblem {
  YAML::Mark mark;
  std::string message;
};

/// "!!str" for "tag:yaml.org,2002:str", the tag as resolved otherwise ("!foo").
std::string tag_as_written(const std::string& tag) {
  const std::string_view core = "tag:yaml.org,2002:";
  return tag.rfind(core, 0) == 0 ? "!!" + tag.substr(core.size()) : tag;
}

/// Checks one document's events: tags, nesting depth; counts the nodes the tree will hold.
class Checker final : public YAML::EventHandler {
 public:
  int64_t nodes = 0;    ///< scalars, nulls, lists and maps
  int64_t aliases = 0;  ///< *name: a reference in the tree, not a copy

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override { ++nodes; }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { ++aliases; }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t,
                const std::string&) override {
    ++nodes;
    check_tag(mark, tag);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    open(mark, tag);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    open(mark, tag);
  }
  void OnMapEnd() override { --depth_; }

 private:
  int depth_ = 0;

  void open(const YAML::Mark& mark, const std::string& tag) {
    ++nodes;
    check_tag(mark, tag);
    if (++depth_ > kMaxYamlDepth) {
      throw YamlProblem{mark, "lists and maps nested more than " + std::to_string(kMaxYamlDepth) +
                                  " deep; a scenario nests at most five (e.g. "
                                  "switches.NAME.pfc.KEY)"};
    }
  }

  /// "?" (a plain value) and "!" (a quoted one) are untagged; YAML's core tags say what the key
  /// reads anyway. Any other tag asks for a type or a constructor fabricsim does not have.
  static void check_tag(const YAML::Mark& mark, const std::string& tag) {
    if (tag.empty() || tag == "?" || tag == "!") return;
    static const char* const kCore[] = {"str", "int", "float", "bool", "null", "map", "seq"};
    for (const char* name : kCore) {
      if (tag == std::string("tag:yaml.org,2002:") + name) return;
    }
    throw YamlProblem{mark, "unknown YAML tag '" + tag_as_written(tag) +
                                "': fabricsim reads each value by its key and honours no tags "
                                "but YAML's core ones (!!str, !!int, !!float, !!bool, !!null, "
                                "!!map, !!seq); remove it"};
  }
};

/// The events of the first document of `text`: throws YamlProblem, or yaml-cpp's exceptions.
Checker check_events(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  Checker checker;
  parser.HandleNextDocument(checker);
  return checker;
}

/// The message of a yaml-cpp parser exception: its own, except for the depth guard's "bad file".
std::string syntax_message(const YAML::ParserException& e) {
  if (dynamic_cast<const YAML::DeepRecursion*>(&e) != nullptr) {
    return "lists and maps nested too deep (yaml-cpp stops at " +
           std::to_string(static_cast<const YAML::DeepRecursion&>(e).depth()) + ")";
  }
  return "YAML syntax error: " + e.msg;
}

}  // namespace

YAML::Node parse_yaml(const std::string& file, std::string text) {
  // A binary file (an archive, an executable) is not YAML: say so, not "unknown escape".
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    const size_t line_start = text.rfind('\n', nul);
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + nul, '\n'));
    const int column =
        static_cast<int>(nul - (line_start == std::string::npos ? 0 : line_start + 1));
    throw ConfigError(file, line, column + 1, "", "binary data (NUL byte): not a YAML text file");
  }
  // yaml-cpp keeps the '\r' of a CRLF last line without a final newline in its value.
  if (!text.empty() && text.back() == '\r') text += '\n';
  // Documents are counted here, not by YAML::LoadAll: yaml-cpp 0.7's LoadAll loops forever,
  // allocating, on some malformed text (a fuzzer's find: "a: 300ns\n, b t]rue"). A document
  // ends at a line "---" or "..." in column 0; one with any content other than comments counts,
  // content after "---" on its own line included ("--- {a: 1}"). A line starting with '%'
  // before a document's content, at the start or after "...", is a directive (%YAML 1.2,
  // %TAG ! tag:example.com,2000:): it belongs to the document that follows.
  int documents = 0, second_line = 0, second_column = 0;
  bool content = false;  // the current document has content
  bool prefix = true;    // directives may come here: the start, or after "..."
  {
    std::istringstream lines(text);
    std::string l;
    for (int n = 1; std::getline(lines, l); ++n) {
      if (!l.empty() && l.back() == '\r') l.pop_back();
      const bool marker = (l.rfind("---", 0) == 0 || l.rfind("...", 0) == 0) &&
                          (l.size() == 3 || l[3] == ' ' || l[3] == '\t');
      size_t first = 0;
      if (marker) {
        content = false;
        prefix = l[0] == '.';
        first = l.find_first_not_of(" \t", 3);  // "--- {a: 1}": the document starts here
        if (l[0] == '.') first = std::string::npos;
      } else {
        first = l.find_first_not_of(" \t");
        if (prefix && !content && first == 0 && l[0] == '%') continue;  // a directive
      }
      if (first == std::string::npos || l[first] == '#' || content) continue;
      content = true;
      prefix = false;
      if (++documents == 2) {
        second_line = n;
        second_column = static_cast<int>(first) + 1;
      }
    }
  }
  if (documents > 1) {
    throw ConfigError(file, second_line, second_column, "",
                      "expected one YAML document, found " + std::to_string(documents));
  }
  try {
    const Checker checked = check_events(text);
    const double need = static_cast<double>(checked.nodes) * kYamlNodeBytes +
                        static_cast<double>(checked.aliases) * 64;
    if (const MemoryBudget budget = memory_budget(); over_half(need, budget)) {
      throw ConfigError(file, 0, 0, "",
                        "its " + std::to_string(checked.nodes) + " YAML values would take about " +
                            gigabytes_text(need) + " to read (about " +
                            std::to_string(static_cast<int>(kYamlNodeBytes)) +
                            " bytes each), more than half of " + budget.text);
    }
    return building([&] { return YAML::Load(text); }, "the YAML tree of " + file);
  } catch (const YamlProblem& p) {
    throw ConfigError(file, p.mark.line + 1, p.mark.column + 1, "", p.message);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(file, e.mark.line + 1, e.mark.column + 1, "", syntax_message(e));
  }
}

YAML::Node parse_yaml_value(const std::string& text) {
  if (const size_t br = text.find_first_of("\r\n"); br != std::string::npos) {
    throw std::invalid_argument("expected one line; found a line break after '" +
                                text.substr(0, br) + "' (what follows it would be dropped)");
  }
  try {
    check_events(text);
  } catch (const YamlProblem& p) {
    throw std::invalid_argument(p.message + " (at character " + std::to_string(p.mark.column + 1) +
                                " of the value)");
  }
  return YAML::Load(text);
}

}  // namespace fabricsim
