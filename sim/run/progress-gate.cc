#include "sim/run/progress-gate.h"

#include <unistd.h>

#include <algorithm>

namespace hilosim
{

ProgressGate::ProgressGate(bool terminal, int percent)
  : m_terminal(terminal)
  , m_percent(std::clamp(percent, 1, 100))
{
}

bool
ProgressGate::StderrIsTerminal()
{
    return isatty(STDERR_FILENO) == 1;
}

bool
ProgressGate::ShouldShow(size_t arm, uint64_t done, uint64_t total)
{
    if (m_terminal)
        return true;
    if (total == 0 || done >= total)
    {
        const bool first = m_shownBucket[arm] != 100 + 1;
        m_shownBucket[arm] = 100 + 1; // the end, shown once
        return first;
    }
    const int bucket = static_cast<int>(100 * done / total) / m_percent * m_percent;
    auto it = m_shownBucket.find(arm);
    if (bucket == 0 || (it != m_shownBucket.end() && it->second >= bucket))
        return false;
    m_shownBucket[arm] = bucket;
    return true;
}

} // namespace hilosim
