// The pending-event set: FIFOs of equal delay, merged by a small heap.
//
// Events are ordered by the full key (time, Event::key), where the key packs the pushing
// logical process and its own push count (simulator.hpp explains the order and why it does not
// depend on an MPI partition). The queue only compares keys: any strict total order works.
//
// A network schedules most events a fixed delay ahead of now: a frame's serialization at one
// rate, serialization plus propagation of one link type. Events pushed with the same delay
// d = time - now, while now never decreases, arrive in time order already, so each such delay
// class is a FIFO and needs no sorting at all. Ties at the same time, however, come from
// different LPs in any order of their keys (two LPs executing at the same picosecond push with
// the same delay), so an event joins its class's FIFO only if its key is greater than the
// FIFO's tail; otherwise it goes to the general heap. FIFO order is thus always key order.
// The queue keeps one FIFO per delay class (a direct-mapped table of kClasses slots) and a
// binary heap over the classes' head events; any other event (a delay whose slots are taken, an
// event pushed without the delay, an equal-time event out of key order) goes into an ordinary
// binary heap that takes part in the merge as one more class.
// Push into a non-empty class: O(1), one comparison with its tail; pop: O(log k) for k
// non-empty classes (tens) instead of O(log n) for n pending events (thousands). The order
// popped is exactly the (time, key) order a single heap gives, so results do not depend on
// this structure (test_engine checks it against a sorted set). Calendar queues (Brown, CACM
// 1988) get O(1) too but must tune a bucket width; per-delay FIFOs are the "timing wheel of
// fixed delays" of packet simulators, where delays come from a handful of link types.
#pragma once

#include <cstdint>
#include <vector>

namespace fabricsim {

/// A handler bound at compile time: a plain function pointer taking the target object and one
/// 64-bit argument (a packet pointer, a port index, a timer generation …). No closures.
using EventFn = void (*)(void* obj, uint64_t arg);

/// One pending event: 48 bytes, trivially copyable. Ordered by (time_ps, key).
struct Event {
  int64_t time_ps;
  uint64_t key;  ///< the pushing LP and its push count (Simulator: src_lp << 40 | src_seq)
  EventFn fn;
  void* obj;
  uint64_t arg;
  uint32_t lp;  ///< the LP the event belongs to (its handler's); not part of the order
};

class EventQueue {
 public:
  EventQueue() : classes_(kClasses) {}

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  /// The earliest event. Precondition: !empty().
  const Event& top() const { return front_of(merge_.front().source); }

  /// Pushes an event scheduled `delay_ps` = e.time_ps - now ahead of the current time now.
  /// Precondition (the Simulator's): now never decreases between calls. Keys need not grow:
  /// an event whose key is not above its class's tail (same time) goes to the general heap.
  void push(const Event& e, int64_t delay_ps) {
    uint32_t slot = slot_of(delay_ps);
    Fifo* f = &classes_[slot];
    if (f->delay_ps != delay_ps) {
      Fifo* g = &classes_[slot ^ 1];  // two-way: the neighbouring slot
      if (g->delay_ps == delay_ps) {
        f = g;
        slot ^= 1;
      } else {
        // A delay seen for the first time goes to the general heap and claims an empty slot:
        // only a delay that recurs gets a FIFO (with random delays, as in the hold model,
        // every event would otherwise make a class of one).
        if (f->count == 0) {
          f->delay_ps = delay_ps;
        } else if (g->count == 0) {
          g->delay_ps = delay_ps;
        }
        push(e);
        return;
      }
    }
    if (f->count != 0 && !before(f->back(), e)) {
      // Same time as the tail, smaller key (another LP pushed first): FIFO order would break.
      push(e);
      return;
    }
    f->push_back(e);
    ++size_;
    if (f->count == 1) merge_push(Head{e.time_ps, e.key, slot});
  }

  /// Pushes an event in any order of time and key (the general heap).
  void push(const Event& e) {
    heap_.push_back(e);
    ++size_;
    if (sift_up(heap_.size() - 1) == 0) {
      // A new minimum of the general heap: its entry in the merge moves (or appears).
      if (heap_.size() == 1) {
        merge_push(Head{e.time_ps, e.key, kGeneral});
      } else {
        merge_update(general_pos_, Head{e.time_ps, e.key, kGeneral});
      }
    }
  }

  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop() {
    const uint32_t source = merge_.front().source;
    Event top;
    if (source == kGeneral) {
      top = heap_.front();
      heap_.front() = heap_.back();
      heap_.pop_back();
      if (!heap_.empty()) sift_down(0);
    } else {
      top = classes_[source].pop_front();
    }
    --size_;
    if (source_empty(source)) {
      merge_pop();
    } else {
      const Event& next = front_of(source);
      merge_.front().time_ps = next.time_ps;
      merge_.front().key = next.key;
      merge_down(0);
    }
    return top;
  }

  void clear() {
    for (Fifo& f : classes_) f.head = f.count = 0;
    heap_.clear();
    merge_.clear();
    size_ = 0;
  }

 private:
  static constexpr uint32_t kClasses = 256;  // delay classes (a power of two)
  static constexpr uint32_t kGeneral = kClasses;

  /// A ring buffer of events, in (time, key) order.
  struct Fifo {
    std::vector<Event> buf;  // capacity a power of two
    uint32_t head = 0;
    uint32_t count = 0;
    int64_t delay_ps = -1;

    void push_back(const Event& e) {
      if (count == buf.size()) grow();
      buf[(head + count) & (buf.size() - 1)] = e;
      ++count;
    }
    const Event& back() const { return buf[(head + count - 1) & (buf.size() - 1)]; }
    Event pop_front() {
      const Event e = buf[head];
      head = (head + 1) & static_cast<uint32_t>(buf.size() - 1);
      --count;
      return e;
    }
    void grow() {
      std::vector<Event> bigger(buf.empty() ? 16 : 2 * buf.size());
      for (uint32_t i = 0; i < count; ++i) bigger[i] = buf[(head + i) & (buf.size() - 1)];
      buf.swap(bigger);
      head = 0;
    }
  };

  /// A class's earliest event, cached in the merge heap so comparisons stay in one array.
  struct Head {
    int64_t time_ps;
    uint64_t key;
    uint32_t source;  // a delay class, or kGeneral
  };

  static uint32_t slot_of(int64_t delay_ps) {
    uint64_t x = static_cast<uint64_t>(delay_ps) * 0x9E3779B97F4A7C15ULL;
    return static_cast<uint32_t>(x >> 56) & (kClasses - 1);
  }
  const Event& front_of(uint32_t source) const {
    return source == kGeneral ? heap_.front() : classes_[source].buf[classes_[source].head];
  }
  bool source_empty(uint32_t source) const {
    return source == kGeneral ? heap_.empty() : classes_[source].count == 0;
  }

  static bool before(int64_t ta, uint64_t ka, int64_t tb, uint64_t kb) {
    return ta < tb || (ta == tb && ka < kb);
  }
  static bool before(const Event& a, const Event& b) {
    return before(a.time_ps, a.key, b.time_ps, b.key);
  }
  static bool before(const Head& a, const Head& b) {
    return before(a.time_ps, a.key, b.time_ps, b.key);
  }

  // The merge heap over the non-empty sources. general_pos_ tracks kGeneral's index.
  void merge_place(size_t i, const Head& h) {
    merge_[i] = h;
    if (h.source == kGeneral) general_pos_ = i;
  }
  void merge_push(const Head& h) {
    merge_.push_back(h);
    merge_up(merge_.size() - 1);
  }
  void merge_pop() {
    const Head last = merge_.back();
    merge_.pop_back();
    if (!merge_.empty()) {
      merge_place(0, last);
      merge_down(0);
    }
  }
  /// The general heap's minimum became earlier: its entry moves up.
  void merge_update(size_t i, const Head& h) {
    merge_place(i, h);
    merge_up(i);
  }
  void merge_up(size_t i) {
    const Head h = merge_[i];
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!before(h, merge_[parent])) break;
      merge_place(i, merge_[parent]);
      i = parent;
    }
    merge_place(i, h);
  }
  void merge_down(size_t i) {
    const size_t n = merge_.size();
    const Head h = merge_[i];
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(merge_[child + 1], merge_[child])) ++child;
      if (!before(merge_[child], h)) break;
      merge_place(i, merge_[child]);
      i = child;
    }
    merge_place(i, h);
  }

  // The general heap of events.
  size_t sift_up(size_t i) {  // returns where the event settled
    Event e = heap_[i];
    while (i > 0) {
      size_t parent = (i - 1) / 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
    return i;
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

  std::vector<Fifo> classes_;
  std::vector<Event> heap_;  // the general heap
  std::vector<Head> merge_;  // heap of the non-empty sources' earliest events
  size_t general_pos_ = 0;   // index of kGeneral in merge_, when the general heap is non-empty
  size_t size_ = 0;
};

}  // namespace fabricsim
