// ReconnectBackoff: how long a role waits before trying to reach a peer again after its connection
// ended: 1 s, then twice as long after every failed attempt, up to 8 s, in modelled seconds; back
// to 1 s once connected. No jitter: simulated runs must repeat exactly, and the connection
// attempts of different workers are spread by their own timing anyway.
#ifndef HILOSIM_ROLES_RECONNECT_BACKOFF_H
#define HILOSIM_ROLES_RECONNECT_BACKOFF_H

#include <algorithm>

namespace hilosim
{

class ReconnectBackoff
{
  public:
    static constexpr double kFirstS = 1.0;
    static constexpr double kMaxS = 8.0;

    /// The delay before the next attempt; doubles the one after it.
    double Next()
    {
        const double delay = m_next;
        m_next = std::min(kMaxS, 2 * m_next);
        return delay;
    }
    void Reset() { m_next = kFirstS; }

  private:
    double m_next{kFirstS};
};

} // namespace hilosim

#endif // HILOSIM_ROLES_RECONNECT_BACKOFF_H
