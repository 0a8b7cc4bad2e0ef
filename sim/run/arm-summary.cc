#include "sim/run/arm-summary.h"

#include <algorithm>
#include <cmath>

namespace hilosim
{
namespace
{

// Nearest-rank percentile of a sorted sample.
double
Percentile(const std::vector<double>& sorted, double p)
{
    if (sorted.empty())
    {
        return 0.0;
    }
    const double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
    const size_t i = static_cast<size_t>(std::max(1.0, rank)) - 1;
    return sorted[std::min(i, sorted.size() - 1)];
}

} // namespace

std::vector<double>
UpdateLatencies(const ArmResult& r)
{
    std::vector<double> out;
    for (const ApplyEvent& a : r.applies)
    {
        if (a.hash_ok && a.version >= 1 && a.version <= r.publishes.size())
        {
            out.push_back(a.ready_s - r.publishes[a.version - 1].grad_ready_s);
        }
    }
    return out;
}

double
ComputeOverrun(const ArmResult& r, const ApplyEvent& a)
{
    const double encode = a.version >= 1 && a.version <= r.publishes.size()
                              ? r.publishes[a.version - 1].encode_overrun_s
                              : 0.0;
    return encode + a.overrun_s;
}

std::vector<double>
UpdateLatenciesNet(const ArmResult& r)
{
    std::vector<double> out;
    for (const ApplyEvent& a : r.applies)
    {
        if (a.hash_ok && a.version >= 1 && a.version <= r.publishes.size())
        {
            out.push_back(a.ready_s - r.publishes[a.version - 1].grad_ready_s -
                          ComputeOverrun(r, a));
        }
    }
    return out;
}

std::vector<double>
RecoveryTimes(const ArmResult& r)
{
    std::vector<double> out;
    // When each worker's current process started: a crash restart or a join resets its version.
    std::vector<std::pair<double, uint32_t>> restarts; // (time, worker)
    for (const FaultRecord& f : r.faults)
    {
        if ((f.kind == "worker_crash" || f.kind == "worker_join") && f.end_s >= 0)
        {
            restarts.emplace_back(f.end_s, f.workers.front());
        }
    }
    for (const FaultRecord& f : r.faults)
    {
        if (!f.injected || f.end_s < 0)
        {
            continue;
        }
        uint64_t target = 0;
        for (const PublishEvent& p : r.publishes)
        {
            if (p.published_s <= f.end_s)
                target = p.version;
        }
        for (uint32_t w : f.workers)
        {
            if (f.kind == "replay_divergence")
            {
                target = 0;
                for (const ApplyEvent& a : r.applies)
                {
                    if (a.worker == w && !a.hash_ok && a.ready_s == f.end_s)
                        target = a.version;
                }
            }
            double life = 0;
            for (const auto& [t, rw] : restarts)
            {
                if (rw == w && t <= f.end_s)
                    life = std::max(life, t);
            }
            uint64_t held = 0;
            double reached = -1;
            for (const ApplyEvent& a : r.applies) // in time order
            {
                if (a.worker != w || !a.hash_ok || a.ready_s < life)
                    continue;
                if (a.ready_s <= f.end_s)
                {
                    held = std::max(held, a.version);
                }
                else if (a.version >= target)
                {
                    reached = a.ready_s;
                    break;
                }
            }
            if (held >= target)
                out.push_back(0.0);
            else if (reached >= 0)
                out.push_back(reached - f.end_s);
        }
    }
    return out;
}

uint64_t
VersionsLost(const ArmResult& r)
{
    uint64_t lost = 0;
    const uint64_t steps = r.publishes.size();
    for (uint32_t w = 0; w < r.worker_end.size(); ++w)
    {
        if (!r.worker_end[w].alive)
        {
            continue;
        }
        std::vector<bool> covered(steps + 1, false);
        for (const ApplyEvent& a : r.applies)
        {
            if (a.worker == w && a.hash_ok && a.version <= steps)
                covered[a.version] = true;
        }
        int64_t snapshot = 0;
        for (const CatchUpEvent& c : r.catch_ups)
        {
            if (c.worker == w)
                snapshot = std::max(snapshot, c.snapshot_version);
        }
        for (uint64_t v = 1; v <= steps; ++v)
        {
            if (!covered[v] && static_cast<int64_t>(v) > snapshot)
                ++lost;
        }
    }
    return lost;
}

ArmSummary
Summarize(const ArmResult& r)
{
    ArmSummary s;
    s.steps = r.publishes.size();
    double wire = 0, real = 0;
    for (const PublishEvent& p : r.publishes)
    {
        wire += static_cast<double>(p.wire_bytes);
        real += static_cast<double>(p.frame_bytes);
        s.drift_rel_l2_max = std::max(s.drift_rel_l2_max, p.drift_rel_l2);
        s.members_dropped += p.members_dropped;
    }
    if (s.steps > 0)
    {
        s.wire_bytes_per_update_mean = wire / static_cast<double>(s.steps);
        s.real_bytes_per_update_mean = real / static_cast<double>(s.steps);
        // Steady state: the interval between consecutive versions. The first version waits for
        // no update, so it is left out whenever there is more than one.
        s.step_time_s_mean =
            s.steps > 1 ? (r.publishes.back().published_s - r.publishes.front().published_s) /
                              static_cast<double>(s.steps - 1)
                        : r.publishes.front().published_s;
    }
    if (r.adapter_bytes > 0)
    {
        s.fraction_of_adapter_bytes =
            s.wire_bytes_per_update_mean / static_cast<double>(r.adapter_bytes);
    }
    std::vector<double> lat = UpdateLatencies(r);
    std::sort(lat.begin(), lat.end());
    s.latency_p50_s = Percentile(lat, 50);
    s.latency_p99_s = Percentile(lat, 99);
    s.latency_max_s = lat.empty() ? 0.0 : lat.back();
    std::vector<double> net = UpdateLatenciesNet(r);
    std::sort(net.begin(), net.end());
    s.latency_net_p50_s = Percentile(net, 50);
    s.latency_net_p99_s = Percentile(net, 99);
    s.latency_net_max_s = net.empty() ? 0.0 : net.back();
    if (!r.evals.empty())
    {
        s.final_quality = r.evals.back().quality;
    }
    for (const FaultRecord& f : r.faults)
    {
        s.faults_injected += f.injected ? 1 : 0;
    }
    s.versions_lost = VersionsLost(r);
    // Drivers that do not track workers' lives (processes) report every worker as alive.
    for (const WorkerEnd& w : r.worker_end)
    {
        s.workers_alive += w.alive ? 1 : 0;
    }
    if (r.worker_end.empty())
    {
        s.workers_alive = static_cast<uint32_t>(r.worker_gpu.size());
    }
    std::vector<double> recovery = RecoveryTimes(r);
    std::sort(recovery.begin(), recovery.end());
    s.recoveries = recovery.size();
    s.recovery_p50_s = Percentile(recovery, 50);
    s.recovery_max_s = recovery.empty() ? 0.0 : recovery.back();
    return s;
}

} // namespace hilosim
