// The event loop: jobs' iterations, flows and the policy's decision rounds.
#include "sim/engine.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "policy/harmonics_local.h"
#include "policy/release.h"
#include "sim/event_queue.h"
#include "sim/flow_table.h"

namespace harmonics {
namespace sim {

double JobResult::mean_slowdown() const {
    if (iterations_done == 0 || isolated_s <= 0) return 0;
    return iteration_time_s / static_cast<double>(iterations_done) / isolated_s;
}

double JobResult::jct_s(double end_s) const {
    if (finish_s >= 0) return finish_s - arrival_s;
    double per_iter = iterations_done > 0 ? iteration_time_s / static_cast<double>(iterations_done) : isolated_s;
    return std::max(0.0, end_s - arrival_s) + static_cast<double>(iterations - iterations_done) * per_iter;
}

double RunResult::sched_ms_per_epoch() const {
    if (sched_time_s.empty()) return 0;
    double sum = 0;
    for (double s : sched_time_s) sum += s;
    return 1e3 * sum / static_cast<double>(sched_time_s.size());
}

double phase_alone_s(const CommPhase& phase, const Topology& topo) {
    if (phase.bytes_per_edge <= 0 || phase.links.empty()) return 0;
    double rate = std::numeric_limits<double>::infinity();
    for (const LinkUse& u : phase.links)
        if (u.multiplicity > 0) rate = std::min(rate, topo.link(u.link).capacity_Bps / u.multiplicity);
    return std::isinf(rate) ? 0 : phase.bytes_per_edge / rate;
}

double isolated_iteration_s(const JobProfile& profile, const Topology& topo) {
    double end = 0;
    for (const CommPhase& p : profile.phases) end = std::max(p.start_offset_s, end) + phase_alone_s(p, topo);
    return std::max(profile.compute_s, end);
}

namespace {
// Measurement noise: iteration k of job `id` runs its compute timeline at
// 1 + u·jitter of its pace, u uniform in [-1, 1) from a hash (splitmix64) of
// (seed, id, k), so every policy sees the same draws whatever the order of events.
double compute_scale(const EngineConfig& cfg, JobId id, long k) {
    if (cfg.compute_jitter <= 0) return 1.0;
    std::uint64_t z = (static_cast<std::uint64_t>(cfg.noise_seed) << 40) ^
                      (static_cast<std::uint64_t>(id) << 20) ^ static_cast<std::uint64_t>(k);
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    double u = static_cast<double>(z >> 11) * 0x1.0p-53;
    return 1.0 + cfg.compute_jitter * (2.0 * u - 1.0);
}
}  // namespace

namespace {

// A job's timing noise as the NCCL hook measures it (rhythm.cpp): the median
// absolute deviation of its own compute time per iteration (iteration less
// its hold and its communication) over its latest 8 iterations, once 3 are
// seen. Collisions lengthen the communication, not this.
class ComputeNoise {
public:
    void add(double compute_s) {
        samples_[next_++ % kWindow] = compute_s;
        count_ = std::min(count_ + 1, kWindow);
    }
    double mad_s() const {
        if (count_ < kMinSamples) return 0;
        // On the stack: this runs at the end of every iteration of every job.
        std::array<double, kWindow> v = samples_;
        const double med = median(v.data(), count_);
        for (std::size_t i = 0; i < count_; ++i) v[i] = std::fabs(v[i] - med);
        return median(v.data(), count_);
    }

private:
    static constexpr std::size_t kWindow = 8, kMinSamples = 3;
    static double median(double* v, std::size_t n) {
        std::nth_element(v, v + n / 2, v + n);
        return v[n / 2];
    }
    std::array<double, kWindow> samples_{};
    std::size_t count_ = 0, next_ = 0;
};

struct JobState {
    const SimJob* in = nullptr;
    JobDecision decision;
    double iter_start = 0;
    bool compute_done = false;
    std::size_t next_phase = 0;  // the phase to start next (or running, when flow >= 0)
    int flow = -1;
    double phase_start = 0;
    double comm_this_iter = 0;
    double gate_wait = 0;        // held at the gate this iteration
    double pace = 1;             // this iteration's compute time over the profile's (noise)
    ReleaseMemory release;       // the gate's memory of the previous release
    double measured_period = 0;
    double last_collective = -1; // when its latest iteration's first phase started
    bool known = false;          // the policy sees it (EngineConfig::learn_iterations)
    ComputeNoise noise;
};

class Engine {
public:
    Engine(const Topology& topo, const std::vector<SimJob>& jobs, Policy* policy, const EngineConfig& cfg)
        : topo_(topo), policy_(policy), cfg_(cfg),
          priorities_(policy != nullptr ? policy->uses_priorities() : cfg.fixed_priorities), flows_(topo, priorities_),
          state_(jobs.size()) {
        result_.policy = policy ? policy->name() : "fixed";
        result_.jobs.resize(jobs.size());
        for (std::size_t j = 0; j < jobs.size(); ++j) {
            state_[j].in = &jobs[j];
            JobResult& r = result_.jobs[j];
            r.id = jobs[j].id;
            r.model = jobs[j].model;
            r.arrival_s = jobs[j].arrival_s;
            r.iterations = jobs[j].iterations;
            r.isolated_s = isolated_iteration_s(jobs[j].profile, topo);
            for (const CommPhase& p : jobs[j].profile.phases) {
                r.isolated_comm_s += phase_alone_s(p, topo);
                for (const LinkUse& u : p.links) r.bytes_per_iteration += u.multiplicity * p.bytes_per_edge;
            }
            r.nodes = static_cast<int>(jobs[j].profile.nodes.size());
            r.leaves = static_cast<int>(jobs[j].profile.leaves.size());
            queue_.push(jobs[j].arrival_s, EventType::Arrival, static_cast<int>(j));
        }
        pending_ = jobs.size();
        if (policy_ && cfg_.epoch_s > 0) queue_.push(cfg_.epoch_s, EventType::Epoch, 0);
    }

    RunResult run() {
        auto wall0 = std::chrono::steady_clock::now();
        auto last_print = wall0;
        bool printed = false;
        for (;;) {
            // Before time moves on: one decision round for all jobs learnt
            // and departed at this instant, then new rates for all flow
            // changes of this instant.
            if (!learnt_.empty() && (queue_.empty() || queue_.top().t > now_)) {
                departed_ = false;   // the same round decides for this instant's departures
                decide(EpochReason::Arrival);
                for (int j : learnt_) start_iteration(j);
                learnt_.clear();
                continue;
            }
            if (departed_ && (queue_.empty() || queue_.top().t > now_)) {
                departed_ = false;
                decide(EpochReason::Departure);
                continue;
            }
            if (flows_.dirty() && (queue_.empty() || queue_.top().t > now_)) {
                apply_rates();
                continue;
            }
            if (queue_.empty()) break;
            if (cfg_.end_s > 0 && queue_.top().t > cfg_.end_s) break;
            Event e = queue_.pop();
            now_ = e.t;
            ++result_.events;
            dispatch(e);
            if (cfg_.progress && (result_.events & 0x3fff) == 0) {
                auto w = std::chrono::steady_clock::now();
                if (w - last_print > std::chrono::milliseconds(500)) {
                    if (cfg_.end_s > 0)
                        std::fprintf(stderr, "\r%s: %.0f of %.0f s simulated, %zu jobs running, %zu to come   ",
                                     cfg_.label.c_str(), now_, cfg_.end_s, active_.size(), pending_);
                    else
                        std::fprintf(stderr, "\r%s: %.0f s simulated, %zu jobs running, %zu to come   ",
                                     cfg_.label.c_str(), now_, active_.size(), pending_);
                    last_print = w;
                    printed = true;
                }
            }
        }
        if (printed) std::fprintf(stderr, "\n");
        result_.end_s = cfg_.end_s > 0 ? cfg_.end_s : now_;
        flows_.settle_all(result_.end_s);
        result_.link_bytes = flows_.link_bytes();
        result_.solver_calls = flows_.solver_calls();
        result_.solver_flows = flows_.solver_flows();
        result_.lone_flows = flows_.single_flow_solves();
        return std::move(result_);
    }

private:
    void dispatch(const Event& e) {
        switch (e.type) {
        case EventType::Arrival: on_arrival(e.index); break;
        case EventType::ComputeDone: on_compute_done(e.index); break;
        case EventType::PhaseReady: start_phase(e.index); break;
        case EventType::FlowDone: on_flow_done(e.index, e.version); break;
        case EventType::Epoch: on_epoch(); break;
        }
    }

    void apply_rates() {
        for (int f : flows_.recompute(now_)) {
            const Flow& fl = flows_.flow(f);
            if (fl.rate > 0) queue_.push(now_ + fl.remaining / fl.rate, EventType::FlowDone, f, fl.version);
        }
    }

    // Every job arriving at this instant joins, then one decision round, so
    // the policy sees them together and their first iterations are gated.
    void on_arrival(int first) {
        arrivals_.clear();
        arrivals_.push_back(first);
        while (!queue_.empty() && queue_.top().type == EventType::Arrival && queue_.top().t == now_) {
            arrivals_.push_back(queue_.pop().index);
            ++result_.events;
        }
        for (int j : arrivals_) {
            --pending_;
            active_.push_back(j);
            state_[j].known = cfg_.learn_iterations <= 0;
            if (!policy_) {
                auto it = cfg_.fixed.find(state_[j].in->id);
                if (it != cfg_.fixed.end()) state_[j].decision = it->second;
            }
        }
        if (policy_ && cfg_.learn_iterations <= 0) decide(EpochReason::Arrival);
        for (int j : arrivals_) start_iteration(j);
    }

    void on_epoch() {
        if (active_.empty() && pending_ == 0) return;  // nothing left to decide for
        if (!active_.empty()) decide(EpochReason::Epoch);
        double next = now_ + cfg_.epoch_s;
        if (cfg_.end_s <= 0 || next <= cfg_.end_s) queue_.push(next, EventType::Epoch, 0);
    }

    void start_iteration(int j) {
        JobState& s = state_[j];
        s.iter_start = now_;
        s.compute_done = false;
        s.next_phase = 0;
        s.comm_this_iter = 0;
        s.gate_wait = 0;
        // A slower backward pass also hands its gradients to the collectives
        // later: the phases' start offsets follow the same pace, or a job
        // whose iteration ends with communication would never jitter.
        s.pace = compute_scale(cfg_, s.in->id, result_.jobs[j].iterations_done);
        queue_.push(now_ + s.pace * s.in->profile.compute_s, EventType::ComputeDone, j);
        schedule_phase(j);
    }

    // The gate: the first slot origin + shift + k·period at or after `ready`.
    // Held at most gate_cap_s, as the hook never holds longer.
    double next_slot(const JobDecision& d, double ready, ReleaseMemory& mem) {
        if (!cfg_.gate || !d.gated || d.period_s <= 0) return ready;
        // The release rule the NCCL hook applies too (policy/release.h): a job
        // a little late for its slot goes at once instead of losing a period.
        double slot = next_release_s(d, ready, mem);
        count_release(d, ready, slot, mem);
        if (cfg_.gate_cap_s > 0 && slot - ready > cfg_.gate_cap_s) return ready + cfg_.gate_cap_s;
        return slot;
    }

    // RunResult's release counts, for a gated job released at `release`.
    void count_release(const JobDecision& d, double ready, double release, const ReleaseMemory& mem) {
        ++result_.gated_releases;
        const double P = d.period_s, eps = 1e-9 * P;
        if (mem.late_s > 0) {
            ++result_.late_releases;
        } else if (release > ready + eps) {
            // Within half a period past its slot it came late; beyond, early
            // for the next one (T below P), as every gated job that waits.
            const double past = ready - latest_slot_s(d, ready);
            if (past > eps && past < 0.5 * P) ++result_.missed_slots;
        }
    }

    int priority(const JobState& s) const { return priorities_ ? s.decision.priority : 0; }

    void schedule_phase(int j) {
        JobState& s = state_[j];
        const std::vector<CommPhase>& phases = s.in->profile.phases;
        if (s.next_phase >= phases.size()) {
            maybe_end_iteration(j);
            return;
        }
        double ready = std::max(now_, s.iter_start + s.pace * phases[s.next_phase].start_offset_s);
        if (s.next_phase == 0 && s.in->profile.holds) {   // a measuring-only job's hook never holds
            double slot = next_slot(s.decision, ready, s.release);
            s.gate_wait = slot - ready;
            ready = slot;
        }
        if (ready <= now_)
            start_phase(j);
        else
            queue_.push(ready, EventType::PhaseReady, j);
    }

    // What the hooks report as the job's latest collective. Before its
    // first, one period before that first is due: a job decided at its
    // arrival is seen where it will come.
    double last_collective(int j) const {
        const JobState& s = state_[j];
        if (s.last_collective >= 0) return s.last_collective;
        const JobProfile& p = s.in->profile;
        const double offset = p.phases.empty() ? 0 : p.phases[0].start_offset_s;
        const double period = s.measured_period > 0 ? s.measured_period : p.isolated_period_s;
        return s.iter_start + s.pace * offset - period;
    }

    void start_phase(int j) {
        JobState& s = state_[j];
        const CommPhase& p = s.in->profile.phases[s.next_phase];
        if (s.next_phase == 0) s.last_collective = now_;
        s.phase_start = now_;
        if (p.bytes_per_edge <= 0 || p.links.empty()) {  // nothing to move
            ++s.next_phase;
            schedule_phase(j);
            return;
        }
        s.flow = flows_.add(j, &p.links, p.bytes_per_edge, priority(s), now_);
    }

    void on_flow_done(int f, std::uint32_t version) {
        const Flow& fl = flows_.flow(f);
        if (!fl.active || fl.version != version) return;  // superseded by a rate change
        int j = fl.job;
        JobState& s = state_[j];
        flows_.finish(f, now_);
        s.flow = -1;
        s.comm_this_iter += now_ - s.phase_start;
        trace(j);
        ++s.next_phase;
        schedule_phase(j);
    }

    void trace(int j) {
        const JobState& s = state_[j];
        if (cfg_.trace_to_s <= cfg_.trace_from_s) return;
        if (now_ < cfg_.trace_from_s || s.phase_start >= cfg_.trace_to_s) return;
        const CommPhase& p = s.in->profile.phases[s.next_phase];
        double dt = now_ - s.phase_start;
        for (const LinkUse& u : p.links) {
            if (topo_.link(u.link).kind != LinkKind::SwitchUp) continue;
            double rate = dt > 0 ? u.multiplicity * p.bytes_per_edge / dt : 0;
            result_.trace.push_back(TraceSegment{u.link, s.in->id, s.phase_start, now_, rate});
        }
    }

    void on_compute_done(int j) {
        state_[j].compute_done = true;
        maybe_end_iteration(j);
    }

    void maybe_end_iteration(int j) {
        JobState& s = state_[j];
        if (!s.compute_done || s.flow >= 0 || s.next_phase < s.in->profile.phases.size()) return;
        JobResult& r = result_.jobs[j];
        double dur = now_ - s.iter_start;
        ++r.iterations_done;
        r.iteration_time_s += dur;
        r.comm_time_s += s.comm_this_iter;
        if (r.iterations_done > r.iterations / 4) {
            ++r.steady_iterations_done;
            r.steady_iteration_time_s += dur;
            r.steady_comm_time_s += s.comm_this_iter;
        }
        // What a hook reports: its smoothed iteration period net of the time
        // it held the collective at the gate (the hook knows that), so a
        // schedule's own waiting does not feed back into the next period.
        double natural = dur - s.gate_wait;
        s.noise.add(natural - s.comm_this_iter);
        s.release.noise_s = noise_slip_s(s.noise.mad_s());
        s.measured_period = s.measured_period > 0 ? 0.7 * s.measured_period + 0.3 * natural : natural;
        if (r.iterations_done >= r.iterations) {
            depart(j);
            return;
        }
        if (!s.known && r.iterations_done >= cfg_.learn_iterations) {
            // Its rhythm is learnt: decided (with the others learnt at this
            // instant, as a schedd coalesces them) before its next iteration.
            s.known = true;
            if (policy_) {
                learnt_.push_back(j);
                return;
            }
        }
        start_iteration(j);
    }

    void depart(int j) {
        result_.jobs[j].finish_s = now_;
        active_.erase(std::find(active_.begin(), active_.end(), j));
        if (policy_) departed_ = true;
    }

    void decide(EpochReason why) {
        profiles_.clear();
        for (int j : active_) {
            if (!state_[j].known) continue;   // runs free until its rhythm is learnt
            profiles_.push_back(state_[j].in->profile);
            profiles_.back().measured_period_s = state_[j].measured_period;
            profiles_.back().last_collective_s = last_collective(j);
            if (cfg_.time_limit_factor > 0)
                profiles_.back().end_s = state_[j].in->arrival_s + cfg_.time_limit_factor *
                                             static_cast<double>(state_[j].in->iterations) *
                                             state_[j].in->profile.isolated_period_s;
        }
        Decisions d = policy_->decide(topo_, profiles_, now_, why);
        result_.sched_time_s.push_back(d.sched_time_s);
        for (int j : active_) {
            JobState& s = state_[j];
            auto it = d.jobs.find(s.in->id);
            JobDecision next = it != d.jobs.end() ? it->second : JobDecision{};
            if (cfg_.record_decisions && !same_schedule(s.decision, next))
                result_.decisions.push_back(DecisionChange{now_, s.in->id, next, s.measured_period});
            s.decision = next;
            if (s.flow >= 0) flows_.set_priority(s.flow, priority(s));
        }
    }

    const Topology& topo_;
    Policy* policy_;
    const EngineConfig& cfg_;
    bool priorities_;
    FlowTable flows_;
    EventQueue queue_;
    std::vector<JobState> state_;
    std::vector<int> active_;
    std::vector<int> arrivals_;  // scratch: the jobs arriving at this instant
    bool departed_ = false;      // a departure awaits its decision round
    std::vector<int> learnt_;    // jobs just learnt, their next iteration awaiting a decision round
    std::size_t pending_ = 0;
    std::vector<JobProfile> profiles_;
    double now_ = 0;
    RunResult result_;
};

}  // namespace

RunResult simulate(const Topology& topo, const std::vector<SimJob>& jobs, Policy* policy, const EngineConfig& cfg) {
    Engine engine(topo, jobs, policy, cfg);
    return engine.run();
}

}  // namespace sim
}  // namespace harmonics
