// trace.json: Chrome trace-event JSON (the "JSON Array Format" of Google's Trace Event Format
// document), which Perfetto (ui.perfetto.dev) and chrome://tracing open.
//
// Events are streamed to the file as they happen, so memory stays flat however long the run;
// after `max_events` events the writer stops recording and the file ends with one instant event
// saying the trace was truncated (no multi-GB surprise files). Timestamps are simulated time in
// microseconds printed exactly from integer picoseconds ("ts": 12.345678), so the file is
// byte-identical for the same scenario and seed.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace fabricsim {

class ChromeTrace {
 public:
  /// Opens `path` for writing. Throws std::runtime_error if it cannot be written, and
  /// std::invalid_argument if max_events < 1.
  ChromeTrace(const std::string& path, int64_t max_events);
  /// Closes the JSON array (also done by the destructor; idempotent).
  ~ChromeTrace();
  ChromeTrace(const ChromeTrace&) = delete;
  ChromeTrace& operator=(const ChromeTrace&) = delete;

  /// Metadata ("ph":"M"): names a process / a thread track in the viewer. Not counted against
  /// max_events.
  void process_name(int pid, const std::string& name);
  void thread_name(int pid, int tid, const std::string& name);

  /// Async span ("ph":"b" / "e") with an id, for overlapping intervals such as messages.
  /// `args_json` is "" or a JSON object text added as "args".
  void async_begin(const std::string& cat, const std::string& name, uint64_t id, int pid,
                   int tid, int64_t t_ps, const std::string& args_json = "");
  void async_end(const std::string& cat, const std::string& name, uint64_t id, int pid, int tid,
                 int64_t t_ps);
  /// Counter ("ph":"C"): a value over time on a named counter track of process `pid`.
  void counter(int pid, const std::string& name, int64_t t_ps, int64_t value);
  /// Instant event ("ph":"i", thread scope).
  void instant(const std::string& cat, const std::string& name, int pid, int tid, int64_t t_ps,
               const std::string& args_json = "");

  /// Whether the next event would still be written (false once max_events is reached).
  bool recording() const { return written_ < max_events_; }
  bool truncated() const { return truncated_; }
  int64_t events_written() const { return written_; }
  /// Finishes the file: the truncation note if any, then "]". Throws std::runtime_error on a
  /// write error.
  void close();

 private:
  // (implementation state: the stream, counts, first-event flag)
  std::ofstream out_;
  std::string path_;
  int64_t max_events_;
  int64_t written_ = 0;
  int64_t last_ts_ps_ = 0;
  bool truncated_ = false;
  bool first_ = true;
  bool closed_ = false;
};

}  // namespace fabricsim
