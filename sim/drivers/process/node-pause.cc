#include "sim/drivers/process/node-pause.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace hilosim
{

namespace
{

bool
ParseSeconds(const std::string& text, double* out)
{
    if (text.empty() || text.find_first_not_of("0123456789.") != std::string::npos)
        return false;
    char* end = nullptr;
    *out = std::strtod(text.c_str(), &end);
    return *end == '\0' && std::isfinite(*out);
}

bool
ParseIndex(const std::string& text, uint32_t* out)
{
    if (text.empty() || text.size() > 9 ||
        text.find_first_not_of("0123456789") != std::string::npos)
        return false;
    *out = static_cast<uint32_t>(std::strtoul(text.c_str(), nullptr, 10));
    return true;
}

} // namespace

hilo::StatusOr<NodePause>
ParseNodePause(const std::string& text)
{
    const hilo::Status bad = hilo::Status::InvalidArgument(
        "expected NODE:AT:FOR, NODE one of learner, worker:N, relay:R, AT seconds >= 0 and FOR "
        "seconds > 0 (e.g. worker:2:10.5:1.5)");
    std::vector<std::string> parts;
    size_t start = 0;
    while (true)
    {
        const size_t colon = text.find(':', start);
        parts.push_back(text.substr(start, colon - start));
        if (colon == std::string::npos)
            break;
        start = colon + 1;
    }
    NodePause p;
    size_t next = 1;
    if (parts.size() == 3 && parts[0] == "learner")
    {
        p.role = NodePause::kLearner;
    }
    else if (parts.size() == 4 && (parts[0] == "worker" || parts[0] == "relay") &&
             ParseIndex(parts[1], &p.index))
    {
        p.role = parts[0] == "worker" ? NodePause::kWorker : NodePause::kRelay;
        next = 2;
    }
    else
    {
        return bad;
    }
    if (!ParseSeconds(parts[next], &p.at_s) || !ParseSeconds(parts[next + 1], &p.for_s) ||
        !(p.for_s > 0))
        return bad;
    return p;
}

std::vector<PauseAction>
PauseSchedule(const std::vector<NodePause>& pauses)
{
    std::vector<PauseAction> out;
    for (const NodePause& p : pauses)
    {
        const double end = p.at_s + p.for_s;
        if (!p.slow)
        {
            out.push_back({p.at_s, true, p, false});
            out.push_back({end, false, p, false});
            continue;
        }
        // Logged: the window's first stop and its last continue.
        bool first = true;
        for (int k = 0;; ++k)
        {
            const double stop = p.at_s + k * kSlowPeriodS + kSlowPeriodS / 10;
            if (stop >= end)
                break;
            out.push_back({stop, true, p, !first});
            first = false;
            const double resume = std::min(end, p.at_s + (k + 1) * kSlowPeriodS);
            out.push_back({resume, false, p, resume < end});
        }
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const PauseAction& a, const PauseAction& b) { return a.at_s < b.at_s; });
    return out;
}

} // namespace hilosim
