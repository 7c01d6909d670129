// trace.json: Chrome trace-event JSON (the "JSON Array Format" of Google's Trace Event Format
// document), which Perfetto (ui.perfetto.dev) and chrome://tracing open.
//
// Events are streamed to the file as they happen, so memory stays flat however long the run;
// after `max_events` events the writer stops recording and the file ends with one instant event
// saying the trace was truncated (no multi-GB surprise files). Timestamps are simulated time in
// microseconds printed exactly from integer picoseconds ("ts": 12.345678), so the file is
// byte-identical for the same scenario and seed.
//
// The file is written whole or not at all (output_file.hpp): the events go to a temporary file
// during the run, renamed to `path` by close(). A write that fails (a full disk) stops the
// trace there: its temporary file is removed, recording() turns false so the run goes on
// without it, and close() reports the failure.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "sim/report/output_file.hpp"

namespace fabricsim {

class ChromeTrace {
 public:
  /// Opens `path`'s temporary file. Throws OutputError if it cannot be written, and
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

  /// Async span ("ph":"b" / "e") with an id (written as a hex string, "0x1f"), for overlapping
  /// intervals such as messages. `args_json` is "" or a JSON object text ("{...}", copied
  /// verbatim: the caller makes it valid JSON) added as "args"; other text throws
  /// std::invalid_argument. Names and categories are JSON-escaped; invalid UTF-8 becomes U+FFFD.
  void async_begin(const std::string& cat, const std::string& name, uint64_t id, int pid, int tid,
                   int64_t t_ps, const std::string& args_json = "");
  void async_end(const std::string& cat, const std::string& name, uint64_t id, int pid, int tid,
                 int64_t t_ps);
  /// Counter ("ph":"C"): a value over time on a named counter track of process `pid`, written as
  /// "name": name, "args": {"bytes": value}.
  void counter(int pid, const std::string& name, int64_t t_ps, int64_t value);
  /// Instant event ("ph":"i", thread scope).
  void instant(const std::string& cat, const std::string& name, int pid, int tid, int64_t t_ps,
               const std::string& args_json = "");

  /// Whether the next event would still be written (false once max_events is reached, after a
  /// failed write, and after close()). Callers may test it to skip building args for an event
  /// that is dropped.
  bool recording() const { return !closed_ && written_ < max_events_; }
  /// True once an event was refused because max_events had been written.
  bool truncated() const { return truncated_; }
  /// Counts an event at `t_ps` that the caller did not build because recording() was false
  /// (cheaper than building it to have it refused); marks the trace truncated.
  void skip(int64_t t_ps) { admit(t_ps); }
  /// As skip(t_ps) `n` times (n >= 0): events at or after `t_ps`, past the cap, that the caller
  /// only counted (a partitioned run's records beyond the cap).
  void skip(int64_t t_ps, int64_t n) {
    if (n > 0) admit(t_ps);
    if (n > 1 && !closed_) dropped_ += n - 1;
  }
  /// Non-metadata events written (at most max_events; the truncation note is not counted).
  int64_t events_written() const { return written_; }
  /// Non-metadata events refused by the cap.
  int64_t events_dropped() const { return dropped_; }
  /// Simulated time of the first event refused by the cap, ps (the trace covers the run up to
  /// there); meaningful when truncated().
  int64_t truncated_at_ps() const { return truncated_at_ps_; }
  /// A global instant event (drawn across every track) named `name` at `t_ps`, with
  /// `args_json` ("" or a JSON object), written whatever the cap (like the truncation note; not
  /// counted in events_written): what a reader must find, such as a deadlock found. Ignored
  /// after close(). Throws std::invalid_argument for args_json that is not an object.
  void global_note(const std::string& name, int64_t t_ps, const std::string& args_json = "");
  /// Finishes the file: if events were refused, one global instant event named
  /// "trace truncated: max_events reached (N events)" (N = max_events) at the time of the first
  /// refused event, then "]", and renames the file into place. Events offered after close()
  /// are ignored. Throws OutputError when the file could not be written whole, now or during
  /// the run (once; later calls do nothing): no file is then left at `path`'s temporary name,
  /// and `path` is as it was before.
  void close();
  /// Whether a write failed (during the run or in close()): the file was not written.
  bool failed() const { return failure_.has_value(); }

 private:
  /// Counts an event against the cap; false if it must not be written.
  bool admit(int64_t t_ps);
  /// Starts an event line: name, cat (if given), ph (JSON text, e.g. "\"C\""), ts, pid, tid (if
  /// given); the caller adds the rest and the closing brace.
  void begin_event(const std::string& name, const std::string* cat, const char* ph, int64_t t_ps,
                   int pid, const int* tid);
  /// One async event ("ph" b or e) with its id; args_json already checked.
  void async_event(char ph, const std::string& cat, const std::string& name, uint64_t id, int pid,
                   int tid, int64_t t_ps, const std::string& args_json);
  /// Starts a new array element in line_ ("," and newline after the first).
  void begin_line();
  /// Writes line_ to the file.
  void flush_line();

  std::unique_ptr<OutputFile> file_;    ///< null once closed or failed
  std::optional<OutputError> failure_;  ///< the write that failed
  bool failure_reported_ = false;       ///< close() threw it already
  std::string line_;                    ///< reused buffer for the event being formatted
  int64_t max_events_;
  int64_t written_ = 0;
  int64_t dropped_ = 0;
  int64_t truncated_at_ps_ = 0;  ///< time of the first refused event
  bool truncated_ = false;
  bool first_ = true;
  bool closed_ = false;
};

}  // namespace fabricsim
