#include "traffic/flow_size_cdf.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <system_error>

#include "sim/core/strings.hpp"

namespace fabricsim {

namespace {

// Sizes above this are refused: every size up to it is an exact double, and sample_bytes()'s
// conversion to int64_t cannot overflow.
constexpr double kMaxSizeBytes = 9007199254740992.0;  // 2^53

// `v` in the shortest fixed-point decimal that reads back to the same double ("97.5", "1000000").
std::string number_text(double v) {
  char buf[400];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return std::string(buf, r.ptr);
}

// What is wrong with a point, and whether the fault is its percent (else its size).
struct Problem {
  std::string message;
  bool at_percent;
};

// The numbers of a point and of the one before it, as the user wrote them (or as number_text
// writes them), for the messages.
struct PointTexts {
  std::string size, percent, prev_size, prev_percent;
};

// The first invariant that `p` breaks after `prev` (nullptr for the first point), or nothing.
// The last point's percent being 100 and the point count are checked by the callers.
std::optional<Problem> point_problem(const FlowSizeCdf::Point* prev, const FlowSizeCdf::Point& p,
                                     const PointTexts& t) {
  const auto [size, percent] = p;
  if (!std::isfinite(size)) return Problem{"size " + t.size + " is not a finite number", false};
  if (size < 0) {
    return Problem{"size " + t.size + " is negative: a flow size is a count of bytes", false};
  }
  if (size > kMaxSizeBytes) {
    return Problem{"size " + t.size + " is above 2^53 bytes", false};
  }
  if (prev == nullptr) {
    if (percent != 0) {
      return Problem{"the first point's percent must be 0, got " + t.percent, true};
    }
    return std::nullopt;
  }
  if (size <= prev->first) {
    return Problem{"size " + t.size + " is not above the previous " + t.prev_size +
                       ": a CDF's sizes must increase",
                   false};
  }
  if (!(percent > prev->second)) {
    return Problem{"percent " + t.percent + " is not above the previous " + t.prev_percent +
                       ": a CDF must increase",
                   true};
  }
  if (percent > 100) return Problem{"percent " + t.percent + " is above 100", true};
  return std::nullopt;
}

std::string last_percent_message(const std::string& percent_text) {
  return "the last point's percent must be 100, got " + percent_text;
}

std::string too_few_message(size_t n) {
  return "a CDF needs at least two points (percent 0 and percent 100), got " + std::to_string(n);
}

// One whitespace-separated token of a line, with its 1-based column.
struct Token {
  std::string_view text;
  int column;
};

// The tokens of `line` up to a token starting with '#'.
std::vector<Token> tokens_of(std::string_view line) {
  std::vector<Token> out;
  const auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
  };
  size_t i = 0;
  while (i < line.size()) {
    if (is_space(line[i])) {
      ++i;
      continue;
    }
    if (line[i] == '#') break;
    const size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    out.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return out;
}

// The token as a finite double, or nothing.
std::optional<double> number_of(std::string_view s) {
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

}  // namespace

CdfError::CdfError(const std::string& name, int line, int column, const std::string& message)
    : std::runtime_error(
          (name.empty() ? "" : name + ": ") +
          (line > 0 ? "line " + std::to_string(line) + ", column " + std::to_string(column) + ": "
                    : "") +
          message),
      line_(line),
      column_(column),
      message_(message) {}

FlowSizeCdf::FlowSizeCdf(std::vector<Point> points, std::string name)
    : points_(std::move(points)), name_(std::move(name)) {
  const auto fail = [&](const std::string& message) {
    throw std::invalid_argument("flow-size CDF '" + name_ + "': " + message);
  };
  if (points_.size() < 2) fail(too_few_message(points_.size()));
  for (size_t i = 0; i < points_.size(); ++i) {
    const Point* prev = i == 0 ? nullptr : &points_[i - 1];
    const PointTexts texts{number_text(points_[i].first), number_text(points_[i].second),
                           prev ? number_text(prev->first) : "",
                           prev ? number_text(prev->second) : ""};
    if (auto problem = point_problem(prev, points_[i], texts)) {
      fail("point " + std::to_string(i) + " (" + texts.size + ", " + texts.percent +
           "): " + problem->message);
    }
  }
  if (points_.back().second != 100) fail(last_percent_message(number_text(points_.back().second)));
}

double FlowSizeCdf::sample(double u) const {
  if (!(u >= 0 && u <= 1)) {
    throw std::invalid_argument("FlowSizeCdf::sample: u must be in [0, 1], got " +
                                std::to_string(u));
  }
  const double y = 100 * u;
  // The first segment whose upper percent is >= y; the last percent is 100, so one exists.
  const auto hi = std::lower_bound(points_.begin() + 1, points_.end() - 1, y,
                                   [](const Point& p, double v) { return p.second < v; });
  const auto [x0, y0] = *(hi - 1);
  const auto [x1, y1] = *hi;
  return x0 + (x1 - x0) / (y1 - y0) * (y - y0);
}

int64_t FlowSizeCdf::sample_bytes(double u) const {
  return std::max<int64_t>(1, static_cast<int64_t>(sample(u)));
}

double FlowSizeCdf::mean_bytes() const {
  double sum = 0;
  for (size_t i = 1; i < points_.size(); ++i) {
    const auto [x0, y0] = points_[i - 1];
    const auto [x1, y1] = points_[i];
    sum += (x0 + x1) / 2 * (y1 - y0);
  }
  return sum / 100;
}

FlowSizeCdf web_search_cdf() {
  return FlowSizeCdf({{0, 0},
                      {10000, 15},
                      {20000, 20},
                      {30000, 30},
                      {50000, 40},
                      {80000, 53},
                      {200000, 60},
                      {1000000, 70},
                      {2000000, 80},
                      {5000000, 90},
                      {10000000, 97},
                      {30000000, 100}},
                     "web-search");
}

FlowSizeCdf hadoop_cdf() {
  return FlowSizeCdf({{0, 0},       {100, 1},     {200, 2},        {300, 5},      {350, 15},
                      {400, 20},    {500, 30},    {600, 40},       {700, 50},     {1000, 60},
                      {2000, 67},   {7000, 70},   {30000, 72},     {50000, 82},   {80000, 87},
                      {120000, 90}, {300000, 95}, {1000000, 97.5}, {2000000, 99}, {10000000, 100}},
                     "hadoop");
}

FlowSizeCdf parse_flow_size_cdf(const std::string& text, const std::string& name) {
  std::vector<FlowSizeCdf::Point> points;
  PointTexts last;  // the texts of the last point read, for the next point's messages
  int last_line = 0, last_percent_column = 0;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + pos, end - pos);
    ++line_no;
    pos = end + 1;

    const std::vector<Token> tokens = tokens_of(line);
    if (tokens.empty()) continue;
    const int end_column = static_cast<int>(line.size()) + 1;
    if (tokens.size() < 2) {
      throw CdfError(name, line_no, end_column,
                     "expected a percent after the size " + std::string(tokens[0].text) +
                         ": a line is 'size_bytes percent'");
    }
    if (tokens.size() > 2) {
      throw CdfError(name, line_no, tokens[2].column,
                     "expected the end of the line after the percent, got '" +
                         std::string(tokens[2].text) + "': a line is 'size_bytes percent'");
    }
    std::optional<double> numbers[2];
    for (int k = 0; k < 2; ++k) {
      numbers[k] = number_of(tokens[k].text);
      if (!numbers[k]) {
        throw CdfError(name, line_no, tokens[k].column,
                       "expected a number, got '" + std::string(tokens[k].text) + "'");
      }
    }
    const FlowSizeCdf::Point p{*numbers[0], *numbers[1]};
    const PointTexts texts{std::string(tokens[0].text), std::string(tokens[1].text), last.size,
                           last.percent};
    const FlowSizeCdf::Point* prev = points.empty() ? nullptr : &points.back();
    if (auto problem = point_problem(prev, p, texts)) {
      throw CdfError(name, line_no, tokens[problem->at_percent ? 1 : 0].column, problem->message);
    }
    points.push_back(p);
    last = texts;
    last_line = line_no;
    last_percent_column = tokens[1].column;
  }
  if (points.empty()) throw CdfError(name, 0, 0, "no points: " + too_few_message(0));
  if (points.size() < 2) throw CdfError(name, last_line, 1, too_few_message(points.size()));
  if (points.back().second != 100) {
    throw CdfError(name, last_line, last_percent_column, last_percent_message(last.percent));
  }
  return FlowSizeCdf(std::move(points), name);
}

std::string format_flow_size_cdf(const FlowSizeCdf& cdf) {
  std::string out = "# " + cdf.name() + ": flow size (bytes), cumulative percent\n";
  for (const auto& [size, percent] : cdf.points()) {
    out += number_text(size) + " " + number_text(percent) + "\n";
  }
  return out;
}

FlowSizeCdf builtin_flow_size_cdf(const std::string& name) {
  if (name == "web-search") return web_search_cdf();
  if (name == "hadoop") return hadoop_cdf();
  const std::vector<std::string> names = builtin_flow_size_cdf_names();
  std::string message = "unknown flow-size distribution '" + name + "'";
  if (const std::string guess = closest_match(name, names); !guess.empty()) {
    message += ": did you mean '" + guess + "'?";
  }
  message += " (built-in: ";
  for (size_t i = 0; i < names.size(); ++i) message += (i ? ", " : "") + names[i];
  throw std::invalid_argument(message + ")");
}

std::vector<std::string> builtin_flow_size_cdf_names() {
  return {"web-search", "hadoop"};
}

}  // namespace fabricsim
