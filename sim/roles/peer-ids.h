// Peer ids of the roles on any transport: worker i is i; the learner and relays sit at the top of
// the id space. A connecting endpoint announces its id in its hello (sim/net/frame-header.h).
#ifndef HILOSIM_ROLES_PEER_IDS_H
#define HILOSIM_ROLES_PEER_IDS_H

#include <cstdint>

namespace hilosim
{

constexpr uint32_t kLearnerPeerId = 0xFFFF0000u;
constexpr uint32_t kRelayPeerIdBase = 0xFFFE0000u;
constexpr uint32_t
WorkerPeerId(uint32_t worker)
{
    return worker;
}
constexpr uint32_t
RelayPeerId(uint32_t relay)
{
    return kRelayPeerIdBase + relay;
}
/// True for the id of any relay (the relay id space ends where the learner's begins).
constexpr bool
IsRelayPeerId(uint32_t peer)
{
    return peer >= kRelayPeerIdBase && peer < kLearnerPeerId;
}

} // namespace hilosim

#endif // HILOSIM_ROLES_PEER_IDS_H
