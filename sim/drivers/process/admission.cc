#include "sim/drivers/process/admission.h"

namespace hilosim
{

AdmissionDecision
DecideAdmission(size_t members, const std::vector<std::string>& pending_sources,
                const std::string& source, const AdmissionLimits& limits)
{
    AdmissionDecision d;
    if (members >= limits.max_connections)
    {
        d.refuse = true;
        d.refuse_why = "refused a connection from " + source + ": " + std::to_string(members) +
                       " members are connected (the limit)";
        return d;
    }
    size_t from_source = 0;
    for (const std::string& s : pending_sources)
    {
        from_source += s == source ? 1 : 0;
    }
    const bool source_full = from_source >= limits.max_pending_per_source;
    const bool all_full = pending_sources.size() >= limits.max_pending_hellos ||
                          members + pending_sources.size() >= limits.max_connections;
    if (!source_full && !all_full)
    {
        return d;
    }
    for (size_t i = 0; i < pending_sources.size(); ++i)
    {
        if (!source_full || pending_sources[i] == source)
        {
            d.evict = true;
            d.evict_index = i;
            d.evict_why = std::string("oldest of the connections in their hello") +
                          (source_full ? " from " + source : "") + ", dropped for a new one";
            break;
        }
    }
    return d;
}

} // namespace hilosim
