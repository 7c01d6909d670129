// The pending-event set: a binary min-heap of small event records.
//
// Events are ordered by the full key (time, insertion sequence), so two events at the same
// picosecond run in the order they were scheduled: ties are deterministic (after SST's
// Activity ordering and ns-3's EventId). Cost: push and pop O(log n), no allocation per event
// once the heap's vector has grown to the peak number of pending events.
#pragma once

#include <cstdint>
#include <vector>

namespace fabricsim {

/// A handler bound at compile time: a plain function pointer taking the target object and one
/// 64-bit argument (a packet pointer, a port index, a timer generation …). No closures.
using EventFn = void (*)(void* obj, uint64_t arg);

/// One pending event: 40 bytes, trivially copyable.
struct Event {
  int64_t time_ps;
  uint64_t seq;
  EventFn fn;
  void* obj;
  uint64_t arg;
};

class EventQueue {
 public:
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }

  void push(const Event& e) {
    heap_.push_back(e);
    sift_up(heap_.size() - 1);
  }

  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop() {
    Event top = heap_.front();
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    return top;
  }

  void reserve(size_t n) { heap_.reserve(n); }
  void clear() { heap_.clear(); }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time_ps < b.time_ps || (a.time_ps == b.time_ps && a.seq < b.seq);
  }
  void sift_up(size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      size_t parent = (i - 1) / 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  void sift_down(size_t i) {
    const size_t n = heap_.size();
    Event e = heap_[i];
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], e)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = e;
  }
  std::vector<Event> heap_;
};

}  // namespace fabricsim
