#include "sim/net/link-spec.h"

#include <algorithm>
#include <set>

namespace hilosim
{

const std::vector<std::string>&
SupportedQueueDiscs()
{
    static const std::vector<std::string> names = {"fifo",     "red", "codel",
                                                   "fq_codel", "pie", "none"};
    return names;
}

hilo::Status
LinkSpec::Validate(const std::string& where) const
{
    if (rate.GetBitRate() == 0)
    {
        return hilo::Status::InvalidArgument(where + ": rate must be positive");
    }
    if (delay.IsStrictlyNegative())
    {
        return hilo::Status::InvalidArgument(where + ": delay must not be negative");
    }
    if (!(loss_rate >= 0.0 && loss_rate < 1.0))
    {
        return hilo::Status::InvalidArgument(where + ": loss_rate " + std::to_string(loss_rate) +
                                             " is outside [0, 1)");
    }
    if (mtu < 576 || mtu > 65535)
    {
        return hilo::Status::InvalidArgument(where + ": mtu " + std::to_string(mtu) +
                                             " is outside 576..65535 bytes");
    }
    const auto& discs = SupportedQueueDiscs();
    if (std::find(discs.begin(), discs.end(), queue_disc) == discs.end())
    {
        std::string allowed;
        for (const auto& d : discs)
        {
            allowed += allowed.empty() ? "" : ", ";
            allowed += d;
        }
        return hilo::Status::InvalidArgument(where + ": unknown queue_disc \"" + queue_disc +
                                             "\" (allowed: " + allowed + ")");
    }
    if (queue_packets < 1)
    {
        return hilo::Status::InvalidArgument(where + ": queue_packets must be at least 1");
    }
    return hilo::Status::Ok();
}

const char*
TopologyKindName(TopologyKind kind)
{
    switch (kind)
    {
        case TopologyKind::kStar:
            return "star";
        case TopologyKind::kRegions:
            return "regions";
        case TopologyKind::kRelay:
            return "relay";
    }
    return "?";
}

hilo::StatusOr<TopologyKind>
ParseTopologyKind(const std::string& name)
{
    for (auto kind : {TopologyKind::kStar, TopologyKind::kRegions, TopologyKind::kRelay})
    {
        if (name == TopologyKindName(kind))
        {
            return kind;
        }
    }
    return hilo::Status::InvalidArgument("unknown topology kind \"" + name +
                                         "\" (allowed: star, regions, relay)");
}

uint32_t
TopologySpec::WorkerCount() const
{
    if (kind == TopologyKind::kStar)
    {
        return static_cast<uint32_t>(worker_links.size());
    }
    uint32_t n = 0;
    for (const auto& r : regions)
    {
        n += static_cast<uint32_t>(r.worker_links.size());
    }
    return n;
}

hilo::Status
TopologySpec::Validate() const
{
    if (learner_uplink)
    {
        HILO_RETURN_IF_ERROR(learner_uplink->Validate("learner uplink"));
    }
    if (kind == TopologyKind::kStar)
    {
        if (!regions.empty())
        {
            return hilo::Status::InvalidArgument(
                "star topology takes worker_links, not regions (use kind regions or relay)");
        }
        if (worker_links.empty())
        {
            return hilo::Status::InvalidArgument("star topology needs at least one worker link");
        }
        for (size_t i = 0; i < worker_links.size(); ++i)
        {
            HILO_RETURN_IF_ERROR(worker_links[i].Validate("worker " + std::to_string(i) + " link"));
        }
        return hilo::Status::Ok();
    }
    const std::string kindName = TopologyKindName(kind);
    if (!worker_links.empty())
    {
        return hilo::Status::InvalidArgument(kindName +
                                             " topology takes regions, not top-level worker_links");
    }
    if (regions.empty())
    {
        return hilo::Status::InvalidArgument(kindName + " topology needs at least one region");
    }
    std::set<std::string> names;
    for (size_t r = 0; r < regions.size(); ++r)
    {
        const RegionSpec& region = regions[r];
        if (region.name.empty())
        {
            return hilo::Status::InvalidArgument("region " + std::to_string(r) + " has no name");
        }
        if (!names.insert(region.name).second)
        {
            return hilo::Status::InvalidArgument("region name \"" + region.name +
                                                 "\" is used twice");
        }
        HILO_RETURN_IF_ERROR(region.wan.Validate("region " + region.name + " wan link"));
        for (size_t i = 0; i < region.worker_links.size(); ++i)
        {
            HILO_RETURN_IF_ERROR(region.worker_links[i].Validate(
                "region " + region.name + " worker " + std::to_string(i) + " link"));
        }
    }
    if (WorkerCount() == 0)
    {
        return hilo::Status::InvalidArgument(kindName + " topology has no workers");
    }
    return hilo::Status::Ok();
}

} // namespace hilosim
