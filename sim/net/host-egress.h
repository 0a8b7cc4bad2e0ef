// A host's own egress queues, as a Linux host's behave for its TCP sockets: nothing of theirs is
// dropped there, and several sockets sharing one NIC are served in turn, not one window after
// another.
//
// Linux gets this from TCP small queues (TSQ: each socket keeps all but about a millisecond of
// its backlog in the socket, tcp_small_queue_check) below which the default fq_codel qdisc
// round-robins the flows queued. ns-3 3.37 has no TSQ, and senders other than BBR do not pace
// here (as in Linux), so a window leaves the socket at once. The hook chosen is the queue disc:
// every FIFO egress of a host (FifoQueueDisc, or no queue disc at all) becomes an ns-3
// FqCoDelQueueDisc with room for any backlog and its CoDel disarmed (a target no sojourn
// reaches), over a one-packet device queue. That is fq_codel's per-flow deficit round robin
// (one MTU per flow per round, set-associative flow hashing on the 5-tuple) with the backlog
// held where TSQ would hold it, in the host and never dropped. With a single connection on a
// device the service order is the FIFO's, packet for packet.
//
// Why not the socket's send limit: a TSQ budget in TcpLinuxSocket would need to learn when each
// of its segments leaves the NIC (a transmit trace and a per-packet map on every device) and to
// re-enter the sender from there; the queue disc gives the same service order without touching
// the sender. What differs from Linux: the backlog waits in the host's queue rather than in the
// socket, so RTT samples include the host's queueing (as with the FIFO before).
//
// An AQM queue disc the scenario set on a host (RED, CoDel, FQ-CoDel, PIE) is left as it is.
// Routers, which make no TCP sockets, keep their queues.
#ifndef HILO_SIM_NET_HOST_EGRESS_H
#define HILO_SIM_NET_HOST_EGRESS_H

#include "ns3/node.h"
#include "ns3/ptr.h"

#include <cstdint>

namespace hilosim
{

/// Packets a host's fair egress queue holds before it would drop one of its own.
constexpr uint32_t kHostBacklogPackets = 1u << 20;

/// Makes `node`'s point-to-point FIFO egress queues fair and unbounded, as described above.
/// Idempotent; a queue that already holds packets is enlarged instead (its order kept).
/// REQUIRES: an internet stack on `node`.
void MakeHostEgressFair(ns3::Ptr<ns3::Node> node);

} // namespace hilosim

#endif // HILO_SIM_NET_HOST_EGRESS_H
