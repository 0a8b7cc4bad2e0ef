// mode: the sync mode's staleness bound and the simulated-time limit.
#include "sim/scenario/scenario-checker.h"

#include <algorithm>

namespace hilosim
{
namespace scenario_check
{

void
Checker::CheckMode(const Node& root, const Scenario& s, ResolvedScenario* out)
{
    const Node mode = root.Child("mode");
    IntIn(mode, "max_staleness", s.mode().max_staleness(), 0, 1000);
    out->max_staleness = static_cast<uint32_t>(std::max(0, s.mode().max_staleness()));
    std::optional<ns3::Time> max_sim_time;
    if (s.mode().max_sim_time().empty())
        Error(mode, "max_sim_time", "missing; allowed: a duration > 0, e.g. \"10min\"");
    else if (PositiveTime(mode, "max_sim_time", s.mode().max_sim_time(), &max_sim_time))
        out->max_sim_time = *max_sim_time;
    std::optional<ns3::Time> round_timeout;
    if (!s.mode().round_timeout().empty() &&
        PositiveTime(mode, "round_timeout", s.mode().round_timeout(), &round_timeout))
        out->round_timeout = *round_timeout;
}

} // namespace scenario_check
} // namespace hilosim
