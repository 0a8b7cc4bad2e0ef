#include "sim/roles/relay-role.h"

#include "sim/roles/role-messages.h"

#include <memory>
#include <string>

namespace hilosim
{

const char*
RelayForwardingName(RelayForwarding forwarding)
{
    return forwarding == RelayForwarding::kStream ? "stream" : "store_and_forward";
}

RelayRole::RelayRole(RolePort* port, std::vector<uint32_t> worker_peers, RelayHooks hooks,
                     RelayForwarding forwarding)
  : m_port(port)
  , m_workers(std::move(worker_peers))
  , m_forwarding(forwarding)
  , m_hooks(std::move(hooks))
{
}

hilo::Status
RelayRole::HandleMessageStart(uint32_t peer, const RoleMessageHead& head)
{
    if (m_forwarding != RelayForwarding::kStream || head.type != kUpdate)
    {
        return hilo::Status::Ok();
    }
    hilo::Status s = m_port->Forward(peer, head.sequence, m_workers);
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
    auto streaming = m_streaming.find(peer);
    if (streaming != m_streaming.end() && streaming->second == message.sequence)
    {
        m_streaming.erase(streaming); // its bytes already went out as they arrived
    }
    else
    {
        auto bytes = std::make_shared<const std::string>(message.payload);
        for (uint32_t w : m_workers)
        {
            hilo::Status s = m_port->Send(w, kUpdate, bytes, message.wire_bytes);
            if (!s.ok())
            {
                return hilo::Status(s.code(), "relay forward failed: " + s.message());
            }
        }
    }
    if (m_hooks.forwarded)
    {
        m_hooks.forwarded(message.type, message.wire_bytes,
                          static_cast<uint32_t>(m_workers.size()));
    }
    return hilo::Status::Ok();
}

} // namespace hilosim
