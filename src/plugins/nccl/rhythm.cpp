#include "rhythm.h"

#include <algorithm>

namespace hnccl {

namespace {
constexpr int kMaxBurstsPerIteration = 8;
constexpr int kMinRepeats = 3;          // iterations needed before trusting a pattern
constexpr double kMaxPeriodSpread = 0.05;  // MAD / period
constexpr double kMinBytesMatch = 0.8;  // fraction of bursts whose size repeats
// The estimate looks at the latest iterations only: when a schedule starts
// (or stops) gating the job, its period changes, and a long window would
// report the old rhythm, or none at all while it straddles both, for tens
// of iterations.
constexpr size_t kRecentIterations = 8;

uint64_t absdiff(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }
// The forward pass's pause stands out: 1.5 times the next longest.
bool stands_out(uint64_t longest, uint64_t second) { return longest > 0 && 2 * longest >= 3 * second; }
}  // namespace

uint64_t median_of(std::vector<uint64_t>& v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + long(mid), v.end());
  return v[mid];
}

RhythmEstimator::RhythmEstimator(uint64_t burst_gap_ns, size_t window)
    : gap_ns_(burst_gap_ns), window_(window) {}

void RhythmEstimator::add(const CollSample& c) {
  const uint64_t call = c.call_ns ? c.call_ns : (c.start_ns > c.held_ns ? c.start_ns - c.held_ns : 0);
  const uint64_t resumed = c.call_ns ? std::max(c.call_ns, c.resumed_ns) : c.start_ns;
  if (has_open_ && c.start_ns <= open_.end + gap_ns_) {
    open_.start = std::min(open_.start, c.start_ns);
    open_.end = std::max(open_.end, c.end_ns);
    open_.bytes += c.bytes;
    open_.held += c.held_ns;
    open_.first_call = std::min(open_.first_call, call);
    open_.last_resumed = std::max(open_.last_resumed, resumed);
    return;
  }
  if (has_open_) close_open();
  open_ = Burst{c.start_ns, std::max(c.start_ns, c.end_ns), c.bytes, c.held_ns, call, resumed};
  has_open_ = true;
}

void RhythmEstimator::flush(uint64_t now_ns) {
  if (has_open_ && now_ns > open_.end + gap_ns_) close_open();
}

void RhythmEstimator::close_open() {
  bursts_.push_back(open_);
  has_open_ = false;
  while (bursts_.size() > window_) bursts_.pop_front();
}

// Does the burst sequence repeat every m bursts? Fills out on success.
bool RhythmEstimator::try_pattern(int m, Rhythm* out) const {
  if (bursts_.size() < size_t(m) * kMinRepeats + 1) return false;
  const size_t take = std::min(bursts_.size(), size_t(m) * kRecentIterations + 1);
  const std::vector<Burst> bursts(bursts_.end() - long(take), bursts_.end());
  const size_t n = bursts.size();
  // The job's own rhythm: burst to burst, less what the gate held the later
  // bursts. A gated job that now and then misses its slot (held almost a
  // whole period more) keeps the same own period; the raw one would jump.
  // Its compute: the own rhythm less the m bursts' durations. Jobs running
  // free on a shared link slide through each other, so their collectives
  // and periods swing by tens of percent from one iteration to the next
  // while their compute does not: the pattern is judged on compute, which
  // is steady exactly when the job is, however its neighbours collide.
  std::vector<uint64_t> own, comp;
  size_t bytes_match = 0;
  for (size_t i = 0; i + size_t(m) < n; ++i) {
    uint64_t d = bursts[i + size_t(m)].start - bursts[i].start, held = 0, busy = 0;
    for (size_t k = i + 1; k <= i + size_t(m); ++k) held += bursts[k].held;
    for (size_t k = i; k < i + size_t(m); ++k) busy += bursts[k].end - bursts[k].start;
    const uint64_t o = d > held ? d - held : 0;
    own.push_back(o);
    comp.push_back(o > busy ? o - busy : 0);
    const uint64_t a = bursts[i].bytes, b = bursts[i + size_t(m)].bytes;
    if (absdiff(a, b) <= std::max(a, b) / 20) ++bytes_match;
  }
  const size_t pairs = own.size();
  std::vector<uint64_t> tmp = own;
  const uint64_t period = median_of(tmp);  // the scale of every tolerance
  if (period == 0) return false;
  tmp = comp;
  const uint64_t compute = median_of(tmp);
  std::vector<uint64_t> dev;
  for (uint64_t c : comp) dev.push_back(absdiff(c, compute));
  const uint64_t mad = median_of(dev);
  if (double(mad) > kMaxPeriodSpread * double(period)) return false;
  // A window straddling a change of rhythm (a schedule starting or stopping,
  // a new phase of training) may still fit some pattern of several bursts:
  // the older and the newer half must agree.
  const auto half = comp.begin() + long(pairs / 2);
  std::vector<uint64_t> older(comp.begin(), half), newer(half, comp.end());
  if (double(absdiff(median_of(older), median_of(newer))) > kMaxPeriodSpread * double(period)) return false;
  if (double(bytes_match) < kMinBytesMatch * double(pairs)) return false;

  // The iteration starts at the burst position that follows the longest
  // pause (the forward pass before the first communication phase). A pause
  // is what the gate sees before a burst's first call: the time since the
  // previous call went on, on the host's clock. Judged on the GPU's idle
  // time instead, the threshold would be compared with another clock's
  // pauses: on a GPU the host calls ahead of the kernels, and a phase the
  // GPU finds after its longest pause may follow a short one on the host
  // (the gate then held the wrong phase, or none). A hold is never in it:
  // the call comes before its hold, the next pause starts after it.
  int first = 0;
  uint64_t best_gap = 0;
  std::vector<uint64_t> pause(size_t(m), 0);
  for (int p = 0; p < m; ++p) {
    std::vector<uint64_t> gaps;
    for (size_t i = 1; i < n; ++i) {
      if (int(i % size_t(m)) != p) continue;
      const uint64_t call = bursts[i].first_call, before = bursts[i - 1].last_resumed;
      gaps.push_back(call > before ? call - before : 0);
    }
    pause[size_t(p)] = median_of(gaps);
    if (p == 0 || pause[size_t(p)] > best_gap) best_gap = pause[size_t(p)], first = p;
  }
  // Phases of one size of which no pause stands out are one phase seen m
  // times: a shorter period (its compute jittering in a cycle of m, say), or
  // a window straddling a change of rhythm, never m phases of one
  // iteration; and the gate could not tell which of them opens it.
  if (m > 1) {
    bool one_size = true;
    std::vector<uint64_t> sizes;
    for (int p = 0; p < m; ++p) {
      std::vector<uint64_t> v;
      for (size_t i = size_t(p); i < n; i += size_t(m)) v.push_back(bursts[i].bytes);
      sizes.push_back(median_of(v));
      one_size = one_size && absdiff(sizes[0], sizes.back()) <= std::max(sizes[0], sizes.back()) / 20;
    }
    uint64_t second = 0;
    for (int p = 0; p < m; ++p)
      if (p != first) second = std::max(second, pause[size_t(p)]);
    if (one_size && !stands_out(best_gap, second)) return false;
  }
  // Latest complete iteration: the last burst at position `first` whose m
  // bursts are all closed.
  size_t last_first = 0;
  bool found = false;
  for (size_t i = size_t(first); i + size_t(m) <= n; i += size_t(m)) last_first = i, found = true;
  if (!found) return false;

  out->valid = true;
  out->period_ns = compute;  // plus the phases' durations and holds, below
  out->jitter_ns = mad;
  out->bursts_per_iteration = m;
  out->iteration_start_ns = bursts[last_first].start;
  out->iterations = (bursts_.size() - 1) / size_t(m);
  out->phases.clear();
  for (int p = 0; p < m; ++p) {
    std::vector<uint64_t> off, dur, bytes, held;
    for (size_t i = size_t(first); i + size_t(m) <= n; i += size_t(m)) {
      const Burst& b = bursts[i + size_t(p)];
      off.push_back(b.start - bursts[i].start);
      dur.push_back(b.end - b.start);
      bytes.push_back(b.bytes);
      held.push_back(b.held);
    }
    out->phases.push_back(
        Phase{median_of(off), median_of(dur), median_of(bytes), pause[size_t((first + p) % m)], median_of(held)});
    // Reported period = compute + typical phases + typical holds, so that
    // period - holds - phases (what schedd plans with) is the compute exactly.
    out->period_ns += out->phases.back().duration_ns + out->phases.back().held_ns;
  }
  return true;
}

uint64_t opening_pause_ns(const Rhythm& r) {
  if (!r.valid || r.phases.size() < 2) return 0;
  uint64_t second = 0;
  for (size_t i = 1; i < r.phases.size(); ++i) second = std::max(second, r.phases[i].pause_ns);
  if (!stands_out(r.phases[0].pause_ns, second)) return kNoOpening;
  return (r.phases[0].pause_ns + second) / 2;
}

uint64_t next_opening_pause_ns(uint64_t previous, const Rhythm& r) { return r.valid ? opening_pause_ns(r) : previous; }

Rhythm RhythmEstimator::estimate() const {
  Rhythm r;
  for (int m = 1; m <= kMaxBurstsPerIteration; ++m)
    if (try_pattern(m, &r)) return r;
  return Rhythm{};
}

}  // namespace hnccl
