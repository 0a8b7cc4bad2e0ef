#include "sim/drivers/process/event-router.h"

#include "sim/drivers/process/peer-limits.h"

namespace hilosim
{

bool
EarlyMessages::Keep(uint32_t peer, const RoleMessage& m)
{
    if (m_kept.size() >= kMaxEarlyMessages || m_bytes + m.payload.size() > kMaxEarlyBytes)
        return false;
    m_bytes += m.payload.size();
    m_kept.push_back({kMessage, peer, m.type, std::string(m.payload), m.wire_bytes, m.sequence});
    return true;
}

void
EarlyMessages::Replay(const std::function<void(uint32_t, const RoleMessage&)>& message,
                      const std::function<void(uint32_t)>& connected,
                      const std::function<void(uint32_t, bool)>& closed)
{
    std::vector<Kept> kept;
    kept.swap(m_kept);
    m_bytes = 0;
    for (const Kept& k : kept)
    {
        if (k.kind == kConnected)
        {
            connected(k.peer);
            continue;
        }
        if (k.kind != kMessage)
        {
            closed(k.peer, k.kind == kFailed);
            continue;
        }
        RoleMessage m;
        m.type = k.type;
        m.payload = k.payload;
        m.wire_bytes = k.wire_bytes;
        m.sequence = k.sequence;
        message(k.peer, m);
    }
}

EventRouter::EventRouter(std::function<void()> progress,
                         std::function<void(uint32_t peer, const std::string& why)> disconnect)
  : m_progress(std::move(progress))
  , m_disconnect(std::move(disconnect))
{
}

void
EventRouter::OnMessage(uint32_t peer, const RoleMessage& m)
{
    if (m_role.progress && m_role.progress(peer, m))
        m_progress();
    if (!m_role.started())
    {
        if (!m_early.Keep(peer, m))
            m_disconnect(peer, "more messages before this node's role started than it keeps "
                               "(peer-limits.h)");
    }
    else
        Handle(peer, m);
}

void
EventRouter::OnConnected(uint32_t peer)
{
    if (!m_role.started())
        m_early.KeepEvent(peer, EarlyMessages::kConnected);
    else
        m_role.connected(peer);
}

void
EventRouter::OnClosed(uint32_t peer, bool error)
{
    if (!m_role.started())
        m_early.KeepEvent(peer, error ? EarlyMessages::kFailed : EarlyMessages::kClosed);
    else
        m_role.closed(peer, error);
}

void
EventRouter::RoleStarted()
{
    m_early.Replay([this](uint32_t peer, const RoleMessage& m) { Handle(peer, m); },
                   [this](uint32_t peer) { m_role.connected(peer); },
                   [this](uint32_t peer, bool error) { m_role.closed(peer, error); });
}

void
EventRouter::Handle(uint32_t peer, const RoleMessage& m)
{
    hilo::Status s = m_role.message(peer, m);
    if (!s.ok())
        m_disconnect(peer, "unusable message: " + s.message());
}

} // namespace hilosim
