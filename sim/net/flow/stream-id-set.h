// StreamIdSet: the ids of a flow network's streams in one state (active ones, ones that just went
// idle), kept in ascending order so that a loop over the set visits them in the order a loop over
// every stream would, at a cost that grows with the set rather than with the network.
#ifndef HILO_SIM_NET_FLOW_STREAM_ID_SET_H
#define HILO_SIM_NET_FLOW_STREAM_ID_SET_H

#include <algorithm>
#include <cstdint>
#include <vector>

namespace hilosim
{

class StreamIdSet
{
  public:
    /// Adds `id` (no effect if held).
    void Insert(uint32_t id)
    {
        auto it = std::lower_bound(m_ids.begin(), m_ids.end(), id);
        if (it == m_ids.end() || *it != id)
        {
            m_ids.insert(it, id);
        }
    }
    /// Removes `id` (no effect if not held).
    void Erase(uint32_t id)
    {
        auto it = std::lower_bound(m_ids.begin(), m_ids.end(), id);
        if (it != m_ids.end() && *it == id)
        {
            m_ids.erase(it);
        }
    }
    void Clear() { m_ids.clear(); }
    /// Ascending.
    const std::vector<uint32_t>& ids() const { return m_ids; }

  private:
    std::vector<uint32_t> m_ids;
};

} // namespace hilosim

#endif // HILO_SIM_NET_FLOW_STREAM_ID_SET_H
