// The pending-event set: FIFOs of equal delay, merged by a small heap.
//
// Events are ordered by the full key (time, insertion sequence), so two events at the same
// picosecond run in the order they were scheduled: ties are deterministic (after SST's
// Activity ordering and ns-3's EventId).
//
// A network schedules most events a fixed delay ahead of now: a frame's serialization at one
// rate, serialization plus propagation of one link type. Events pushed with the same delay
// d = time - now, while now never decreases and the sequence grows, arrive in (time, seq)
// order already, so each such delay class is a FIFO and needs no sorting at all. The queue keeps
// one FIFO per delay class (a direct-mapped table of kClasses slots) and a binary heap over the
// classes' head events; any other event (a delay whose slots are taken, an event pushed without
// the delay) goes into an ordinary binary heap that takes part in the merge as one more class.
// Push into a non-empty class: O(1), no comparison; pop: O(log k) for k non-empty classes
// (tens) instead of O(log n) for n pending events (thousands). The order popped is exactly the
// (time, seq) order a single heap gives, so results do not depend on this structure
// (test_engine checks it against a sort). Calendar queues (Brown, CACM 1988) get O(1) too but
// must tune a bucket width; per-delay FIFOs are the "timing wheel of fixed delays" of
// packet simulators, where delays come from a handful of link types.
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
  EventQueue() : classes_(kClasses) {}

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  /// The earliest event. Precondition: !empty().
  const Event& top() const { return front_of(merge_.front().source); }

  /// Pushes an event scheduled `delay_ps` = e.time_ps - now ahead of the current time now.
  /// Preconditions (the Simulator's): now never decreases between calls, and e.seq is larger
  /// than every sequence pushed before.
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
    f->push_back(e);
    ++size_;
    if (f->count == 1) merge_push(Head{e.time_ps, e.seq, slot});
  }

  /// Pushes an event in any order of time and sequence (the general heap).
  void push(const Event& e) {
    heap_.push_back(e);
    ++size_;
    if (sift_up(heap_.size() - 1) == 0) {
      // A new minimum of the general heap: its entry in the merge moves (or appears).
      if (heap_.size() == 1) {
        merge_push(Head{e.time_ps, e.seq, kGeneral});
      } else {
        merge_update(general_pos_, Head{e.time_ps, e.seq, kGeneral});
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
      merge_.front().seq = next.seq;
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

  /// A ring buffer of events, in (time, seq) order.
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
    uint64_t seq;
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

  static bool before(int64_t ta, uint64_t sa, int64_t tb, uint64_t sb) {
    return ta < tb || (ta == tb && sa < sb);
  }
  static bool before(const Event& a, const Event& b) {
    return before(a.time_ps, a.seq, b.time_ps, b.seq);
  }
  static bool before(const Head& a, const Head& b) {
    return before(a.time_ps, a.seq, b.time_ps, b.seq);
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
