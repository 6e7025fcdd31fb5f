// The simulator's clock: a binary heap of timed events. Ties are broken by
// insertion order so a run is the same on every machine. Events that became
// stale (a flow whose rate changed) are not removed; they carry a version the
// engine compares against. The heap's storage is reused, so steady-state
// scheduling does not allocate.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

namespace harmonics {
namespace sim {

enum class EventType : std::uint8_t {
    Arrival,      // a job starts its first iteration
    ComputeDone,  // a job's compute phase of the current iteration ends
    PhaseReady,   // a communication phase may start (offset reached or gate slot)
    FlowDone,     // a flow's bytes are delivered (if its version still matches)
    Epoch,        // the policy's periodic decision round
};

struct Event {
    double t;
    std::uint64_t seq;
    EventType type;
    int index;              // job index or flow index
    std::uint32_t version;  // FlowDone: the flow's version when scheduled
};

struct EventLater {
    bool operator()(const Event& a, const Event& b) const {
        if (a.t != b.t) return a.t > b.t;
        return a.seq > b.seq;
    }
};

class EventQueue {
public:
    explicit EventQueue(std::size_t reserve = 1024) {
        std::vector<Event> storage;
        storage.reserve(reserve);
        heap_ = Heap(EventLater(), std::move(storage));
    }
    void push(double t, EventType type, int index, std::uint32_t version = 0) {
        heap_.push(Event{t, seq_++, type, index, version});
    }
    bool empty() const { return heap_.empty(); }
    const Event& top() const { return heap_.top(); }
    Event pop() {
        Event e = heap_.top();
        heap_.pop();
        return e;
    }
    std::size_t size() const { return heap_.size(); }

private:
    using Heap = std::priority_queue<Event, std::vector<Event>, EventLater>;
    Heap heap_;
    std::uint64_t seq_ = 0;
};

}  // namespace sim
}  // namespace harmonics
