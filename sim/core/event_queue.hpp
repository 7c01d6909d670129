// The pending-event set: a 4-ary min-heap of small event records.
//
// Events are ordered by the full key (time, insertion sequence), so two events at the same
// picosecond run in the order they were scheduled: ties are deterministic (after SST's
// Activity ordering and ns-3's EventId). Cost: push O(log4 n), pop O(4 log4 n) comparisons
// but half the levels of a binary heap, so half the cache lines touched once the heap outgrows
// the cache (LaMarca & Ladner, "The influence of caches on the performance of heaps", JEA 1996;
// bench/hold_model.cpp measures it). No allocation per event once the vector has grown to the
// peak number of pending events. The order events come out in is the key's, whatever the
// heap's arity: results do not depend on it.
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
  static constexpr size_t kArity = 4;
  void sift_up(size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) / kArity;
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
      const size_t first = kArity * i + 1;
      if (first >= n) break;
      size_t best = first;
      const size_t last = first + kArity < n ? first + kArity : n;
      for (size_t c = first + 1; c < last; ++c) {
        if (before(heap_[c], heap_[best])) best = c;
      }
      if (!before(heap_[best], e)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }
  std::vector<Event> heap_;
};

}  // namespace fabricsim
