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
        if (a.version >= 1 && a.version <= r.publishes.size())
        {
            out.push_back(a.ready_s - r.publishes[a.version - 1].grad_ready_s);
        }
    }
    return out;
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
    if (!r.evals.empty())
    {
        s.final_quality = r.evals.back().quality;
    }
    return s;
}

} // namespace hilosim
