#include "sim/scenario/source-map.h"

namespace hilosim
{
namespace
{

// True when `inner` is `outer` or lies inside it ("arms[1].budget" inside "arms[1]").
bool
Within(const std::string& inner, const std::string& outer)
{
    if (inner.compare(0, outer.size(), outer) != 0)
    {
        return false;
    }
    return inner.size() == outer.size() || inner[outer.size()] == '.' || inner[outer.size()] == '[';
}

} // namespace

std::string
SourceMap::OverrideFor(const std::string& path) const
{
    for (auto it = m_overrides.rbegin(); it != m_overrides.rend(); ++it)
    {
        if (Within(path, it->first) || Within(it->first, path))
        {
            return "--set " + it->second;
        }
    }
    return "";
}

} // namespace hilosim
