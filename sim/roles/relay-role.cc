#include "sim/roles/relay-role.h"

#include "sim/roles/role-messages.h"

#include "hilo/wire/messages.h"

#include <algorithm>

namespace hilosim
{

const char*
RelayForwardingName(RelayForwarding forwarding)
{
    return forwarding == RelayForwarding::kStream ? "stream" : "store_and_forward";
}

RelayRole::RelayRole(RolePort* port, std::vector<uint32_t> worker_peers, RelayHooks hooks,
                     RelayForwarding forwarding, RelayRoleOptions options)
  : m_port(port)
  , m_workers(std::move(worker_peers))
  , m_forwarding(forwarding)
  , m_hooks(std::move(hooks))
  , m_learner(options.learner_peer)
  , m_absent(options.late_workers.begin(), options.late_workers.end())
  , m_lastVersion(options.last_version)
{
    if (options.restarted)
    {
        m_seen.insert(m_workers.begin(), m_workers.end());
    }
}

std::vector<uint32_t>
RelayRole::PresentWorkers() const
{
    std::vector<uint32_t> present;
    for (uint32_t w : m_workers)
    {
        if (m_absent.count(w) == 0)
        {
            present.push_back(w);
        }
    }
    return present;
}

hilo::Status
RelayRole::FromLearner(uint32_t peer) const
{
    if (m_learner == RelayRoleOptions::kNoLearner || peer == m_learner)
    {
        return hilo::Status::Ok();
    }
    return hilo::Status::InvalidArgument("relay: an update from peer " + std::to_string(peer) +
                                         ", which is not the learner, is not forwarded");
}

hilo::Status
RelayRole::HandleMessageStart(uint32_t peer, const RoleMessageHead& head)
{
    if (m_forwarding != RelayForwarding::kStream || head.type != kUpdate)
    {
        return hilo::Status::Ok();
    }
    hilo::Status from = FromLearner(peer);
    if (!from.ok())
    {
        return from;
    }
    hilo::Status s = m_port->Forward(peer, head.sequence, PresentWorkers());
    if (s.code() == hilo::StatusCode::kNotSupported)
    {
        return hilo::Status::Ok(); // HandleMessage sends it whole
    }
    if (!s.ok())
    {
        return hilo::Status(s.code(), "relay forward failed: " + s.message());
    }
    m_streaming[peer] = head.sequence;
    return hilo::Status::Ok();
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
    hilo::Status from = FromLearner(peer);
    if (!from.ok())
    {
        return from;
    }
    const std::vector<uint32_t> present = PresentWorkers();
    auto bytes = std::make_shared<const std::string>(message.payload);
    auto streaming = m_streaming.find(peer);
    if (streaming != m_streaming.end() && streaming->second == message.sequence)
    {
        m_streaming.erase(streaming); // its bytes already went out as they arrived
    }
    else
    {
        for (uint32_t w : present)
        {
            hilo::Status s = m_port->Send(w, kUpdate, bytes, message.wire_bytes);
            if (!s.ok())
            {
                return hilo::Status(s.code(), "relay forward failed: " + s.message());
            }
        }
    }
    m_latest = bytes;
    m_latestWire = message.wire_bytes;
    if (m_lastVersion != 0)
    {
        // The learner's frames only (checked above); one that does not parse is the workers' to
        // refuse, and leaves the version known as it was.
        auto update = hilo::DecodeUpdateFrame(*bytes);
        if (update.ok())
        {
            m_latestVersion = std::max(m_latestVersion, update->version());
        }
    }
    if (m_hooks.forwarded)
    {
        m_hooks.forwarded(message.type, message.wire_bytes, static_cast<uint32_t>(present.size()));
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
