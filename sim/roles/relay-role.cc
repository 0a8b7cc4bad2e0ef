#include "sim/roles/relay-role.h"

#include "sim/roles/role-messages.h"

#include <algorithm>

namespace hilosim
{

RelayRole::RelayRole(RolePort* port, std::vector<uint32_t> worker_peers, RelayHooks hooks,
                     RelayRoleOptions options)
  : m_port(port)
  , m_workers(std::move(worker_peers))
  , m_hooks(std::move(hooks))
  , m_learner(options.learner_peer)
  , m_absent(options.late_workers.begin(), options.late_workers.end())
{
}

hilo::Status
RelayRole::HandleMessage(uint32_t peer, const RoleMessage& message)
{
    if (message.type != kUpdate)
    {
        return hilo::Status::NotSupported("relay: ignoring message type " +
                                          std::to_string(message.type) + " from " +
                                          std::to_string(peer));
    }
    auto bytes = std::make_shared<const std::string>(message.payload);
    uint32_t copies = 0;
    for (uint32_t w : m_workers)
    {
        if (m_absent.count(w) != 0)
        {
            continue;
        }
        ++copies;
        hilo::Status s = m_port->Send(w, kUpdate, bytes, message.wire_bytes);
        if (!s.ok())
        {
            return hilo::Status(s.code(), "relay forward failed: " + s.message());
        }
    }
    m_latest = bytes;
    m_latestWire = message.wire_bytes;
    if (m_hooks.forwarded)
    {
        m_hooks.forwarded(message.type, message.wire_bytes, copies);
    }
    return hilo::Status::Ok();
}

void
RelayRole::HandlePeerConnected(uint32_t peer)
{
    if (peer == m_learner)
    {
        m_backoff.Reset();
        return;
    }
    m_absent.erase(peer);
    const bool again = !m_seen.insert(peer).second;
    if (again && m_latest && std::find(m_workers.begin(), m_workers.end(), peer) != m_workers.end())
    {
        // Whatever was forwarded while the worker was away is lost; the latest update shows it
        // the gap (or is stale and skipped).
        m_port->Send(peer, kUpdate, m_latest, m_latestWire);
    }
}

void
RelayRole::HandlePeerClosed(uint32_t peer, bool error)
{
    (void) error;
    if (peer != m_learner)
    {
        return; // workers dial the relay again themselves
    }
    m_port->After(m_backoff.Next(), ComputePhase::kTransport, 0.0,
                  [this]() { m_port->Reconnect(m_learner); });
}

} // namespace hilosim
