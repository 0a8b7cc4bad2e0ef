// What the message transport carries and reports: a typed message of real serialized bytes that
// stands for `wire_bytes` on the network.
#ifndef HILO_SIM_NET_MESSAGE_H
#define HILO_SIM_NET_MESSAGE_H

#include "ns3/nstime.h"

#include <cstdint>
#include <string>

namespace hilosim
{

/// A message as delivered to the receiver.
struct Message
{
    uint32_t type{0};       // application tag, opaque to the transport
    std::string payload;    // the real bytes, exactly as sent
    uint64_t wire_bytes{0}; // modelled size on the wire: payload + virtual padding (>= payload)
    uint64_t sequence{0};   // index of this message on its connection and direction, from 0
    ns3::Time sent_at;      // simulated time the sender called Send
    ns3::Time received_at;  // simulated time the last byte (real or virtual) arrived
};

/// A message as the sender sees it (no payload copy): what the "MessageSent" trace reports.
struct MessageMeta
{
    uint32_t type{0};
    uint64_t payload_bytes{0}; // real bytes
    uint64_t wire_bytes{0};    // payload + virtual padding, excluding the frame header
    uint64_t sequence{0};
    ns3::Time sent_at; // when Send was called
};

} // namespace hilosim

#endif // HILO_SIM_NET_MESSAGE_H
