#include "sim/report/trace.hpp"

#include <charconv>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "sim/report/report.hpp"

namespace fabricsim {
namespace {

void append_int(std::string& out, int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

/// A JSON string literal for `s`, escaped as results.json escapes (nlohmann, invalid UTF-8
/// replaced by U+FFFD). Plain printable ASCII, the usual case, skips the library.
void append_json_string(std::string& out, std::string_view s) {
  bool plain = true;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') {
      plain = false;
      break;
    }
  }
  if (plain) {
    out += '"';
    out.append(s);
    out += '"';
    return;
  }
  out +=
      nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// Refuses args text that is not "" or an object, before anything is counted or written.
void check_args(const std::string& args_json) {
  if (args_json.empty() || (args_json.front() == '{' && args_json.back() == '}')) return;
  throw std::invalid_argument("ChromeTrace: args_json must be \"\" or a JSON object, got '" +
                              args_json + "'");
}

void append_args(std::string& out, const std::string& args_json) {
  if (args_json.empty()) return;
  out += ",\"args\":";
  out += args_json;
}

}  // namespace

ChromeTrace::ChromeTrace(const std::string& path, int64_t max_events) : max_events_(max_events) {
  if (max_events < 1) {
    throw std::invalid_argument("ChromeTrace: max_events must be at least 1, got " +
                                std::to_string(max_events));
  }
  file_ = std::make_unique<OutputFile>(path);
  file_->stream() << "[\n";
}

ChromeTrace::~ChromeTrace() {
  try {
    close();
  } catch (...) {  // a destructor must not throw; close() called explicitly reports the error
  }
}

bool ChromeTrace::admit(int64_t t_ps) {
  if (closed_) return false;
  if (written_ >= max_events_) {
    if (!truncated_) {
      truncated_ = true;
      truncated_at_ps_ = t_ps;
    }
    ++dropped_;
    return false;
  }
  ++written_;
  return true;
}

void ChromeTrace::begin_line() {
  line_.clear();
  if (!first_) line_ += ",\n";
  first_ = false;
}

void ChromeTrace::flush_line() {
  std::ostream& out = file_->stream();
  out.write(line_.data(), static_cast<std::streamsize>(line_.size()));
  if (out) return;
  // The disk is full (or the file too large): stop here, drop the partial file, go on with the
  // run; close() reports it.
  try {
    file_->check();
  } catch (const OutputError& e) {
    failure_.emplace(e);
  }
  file_.reset();
  closed_ = true;
}

void ChromeTrace::process_name(int pid, const std::string& name) {
  if (closed_) return;
  begin_line();
  line_ += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":";
  append_int(line_, pid);
  line_ += ",\"args\":{\"name\":";
  append_json_string(line_, name);
  line_ += "}}";
  flush_line();
}

void ChromeTrace::thread_name(int pid, int tid, const std::string& name) {
  if (closed_) return;
  begin_line();
  line_ += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":";
  append_int(line_, pid);
  line_ += ",\"tid\":";
  append_int(line_, tid);
  line_ += ",\"args\":{\"name\":";
  append_json_string(line_, name);
  line_ += "}}";
  flush_line();
}

void ChromeTrace::begin_event(const std::string& name, const std::string* cat, const char* ph,
                              int64_t t_ps, int pid, const int* tid) {
  begin_line();
  line_ += "{\"name\":";
  append_json_string(line_, name);
  if (cat != nullptr) {
    line_ += ",\"cat\":";
    append_json_string(line_, *cat);
  }
  line_ += ",\"ph\":";
  line_ += ph;
  line_ += ",\"ts\":";
  line_ += format_ps_as_us(t_ps);
  line_ += ",\"pid\":";
  append_int(line_, pid);
  if (tid != nullptr) {
    line_ += ",\"tid\":";
    append_int(line_, *tid);
  }
}

void ChromeTrace::async_event(char ph, const std::string& cat, const std::string& name, uint64_t id,
                              int pid, int tid, int64_t t_ps, const std::string& args_json) {
  if (!admit(t_ps)) return;
  begin_event(name, &cat, ph == 'b' ? "\"b\"" : "\"e\"", t_ps, pid, &tid);
  line_ += ",\"id\":\"0x";
  char buf[20];
  line_.append(buf, std::to_chars(buf, buf + sizeof buf, id, 16).ptr);
  line_ += '"';
  append_args(line_, args_json);
  line_ += '}';
  flush_line();
}

void ChromeTrace::async_begin(const std::string& cat, const std::string& name, uint64_t id, int pid,
                              int tid, int64_t t_ps, const std::string& args_json) {
  check_args(args_json);
  async_event('b', cat, name, id, pid, tid, t_ps, args_json);
}

void ChromeTrace::async_end(const std::string& cat, const std::string& name, uint64_t id, int pid,
                            int tid, int64_t t_ps) {
  async_event('e', cat, name, id, pid, tid, t_ps, "");
}

void ChromeTrace::counter(int pid, const std::string& name, int64_t t_ps, int64_t value) {
  if (!admit(t_ps)) return;
  begin_event(name, nullptr, "\"C\"", t_ps, pid, nullptr);
  line_ += ",\"args\":{\"bytes\":";
  append_int(line_, value);
  line_ += "}}";
  flush_line();
}

void ChromeTrace::instant(const std::string& cat, const std::string& name, int pid, int tid,
                          int64_t t_ps, const std::string& args_json) {
  check_args(args_json);
  if (!admit(t_ps)) return;
  begin_event(name, &cat, "\"i\",\"s\":\"t\"", t_ps, pid, &tid);
  append_args(line_, args_json);
  line_ += '}';
  flush_line();
}

void ChromeTrace::global_note(const std::string& name, int64_t t_ps, const std::string& args_json) {
  check_args(args_json);
  if (closed_ || !file_) return;
  const std::string cat = "fabricsim";
  const int tid = 0;
  begin_event(name, &cat, "\"i\",\"s\":\"g\"", t_ps, 0, &tid);
  append_args(line_, args_json);
  line_ += '}';
  flush_line();
}

void ChromeTrace::close() {
  if (closed_) {
    if (failure_ && !failure_reported_) {
      failure_reported_ = true;
      throw *failure_;
    }
    return;
  }
  closed_ = true;
  if (truncated_) {
    // Global scope ("s":"g"): the viewer draws it across every track, where recording stopped.
    begin_line();
    line_ += "{\"name\":\"trace truncated: max_events reached (";
    append_int(line_, max_events_);
    line_ += " events)\",\"cat\":\"trace\",\"ph\":\"i\",\"s\":\"g\",\"ts\":";
    line_ += format_ps_as_us(truncated_at_ps_);
    line_ += ",\"pid\":0,\"tid\":0,\"args\":{\"max_events\":";
    append_int(line_, max_events_);
    line_ += ",\"dropped_events\":";
    append_int(line_, dropped_);
    line_ += "}}";
    flush_line();
    if (!file_) return close();  // that line failed: report it
  }
  line_ = first_ ? "]\n" : "\n]\n";
  flush_line();
  if (!file_) return close();
  try {
    file_->commit();
  } catch (const OutputError& e) {
    failure_.emplace(e);
  }
  file_.reset();
  if (failure_) close();
}

}  // namespace fabricsim
