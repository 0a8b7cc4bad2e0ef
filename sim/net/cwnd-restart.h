// Linux's congestion-window restart after idle (net.ipv4.tcp_slow_start_after_idle = 1, its
// default; RFC 2861 / RFC 7661), as one pure function both network models apply: the packet
// model's TcpIdleRestart (tcp-idle-restart.h) and the flow model's FlowNetwork
// (flow/flow-network.h).
//
// Linux (net/ipv4/tcp_output.c, tcp_event_data_sent and tcp_cwnd_restart): when a data segment
// leaves with nothing in flight, more than one RTO after the last data segment sent (lsndtime,
// never a pure ACK), and the congestion control does not set cwnd itself (cong_control: BBR),
//   ssthresh = tcp_current_ssthresh: unchanged while the window is being reduced (CWR or
//              Recovery state), else max(ssthresh, 3/4 cwnd) -- in Open, Disorder and Loss;
//   cwnd     = halved (in whole segments) once per RTO of idle beyond the first, never below
//              min(initial window, cwnd).
// The growth the restart undoes is only the growth Linux allows: cwnd grows only while it is
// the limit (tcp_is_cwnd_limited; CwndLimit below), so a window-limited transfer does not
// leave an unused window for the restart to halve.
#ifndef HILO_SIM_NET_CWND_RESTART_H
#define HILO_SIM_NET_CWND_RESTART_H

#include <cstdint>

namespace hilosim
{

struct CwndRestartInput
{
    double cwnd_bytes{0};
    double ssthresh_bytes{0};      // infinity (or UINT32_MAX) before the first loss
    double initial_cwnd_bytes{0};  // the initial window (tcp_init_cwnd)
    double segment_bytes{0};       // > 0: cwnd is counted in whole segments, as Linux's packets
    double idle_s{0};              // since the last data segment was sent
    double rto_s{0};               // the connection's current RTO
    bool in_cwnd_reduction{false}; // CWR or Recovery state: ssthresh is left alone
    bool sets_cwnd_itself{false};  // congestion control with its own cwnd rule (BBR): no restart
};

struct CwndRestartResult
{
    bool restarted{false}; // the rule applied (idle longer than one RTO, not exempt)
    double cwnd_bytes{0};
    double ssthresh_bytes{0};
};

/// The restart rule in the file comment. Unchanged values (restarted false) when the idle time
/// is at most one RTO, the RTO is unknown (0: nothing acknowledged yet) or the algorithm is
/// exempt.
CwndRestartResult CwndAfterIdle(const CwndRestartInput& in);

/// Linux's tcp_is_cwnd_limited: whether ACKs may grow cwnd. `cwndLimited`: the window filled
/// during the current flight (tcp_cwnd_validate's is_cwnd_limited); `maxInFlightBytes`: the most
/// bytes in flight during it. In slow start cwnd may grow to twice what was in flight.
bool CwndLimit(double cwndBytes, double ssthreshBytes, bool cwndLimited, double maxInFlightBytes);

} // namespace hilosim

#endif // HILO_SIM_NET_CWND_RESTART_H
