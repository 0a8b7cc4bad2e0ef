// The TCP trace (`hilo-sim run --trace-tcp`, `hilo-emu run --trace-tcp`): the sending state of
// every connection's end, sampled on a fixed period, one column set for every driver and network
// model so that a trace of the packet model, of the flow model and of the kernel (TCP_INFO) can be
// laid over each other (scripts/plot_tcp_trace.py). This header is the one place the columns are
// defined; sim/README.md's data dictionary says which side fills which.
//
// One row per connection end (`node` sends to `peer` over it) and sample at which any value
// differs from that end's previous row: a period of an idle or unchanged connection adds nothing,
// so a long run stays small. A value a side cannot measure is empty, never made up.
#ifndef HILOSIM_NET_TCP_TRACE_H
#define HILOSIM_NET_TCP_TRACE_H

#include "hilo/core/status.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hilosim
{

/// The sampling period of both drivers (simulated time in hilo-sim, the run's wall clock in
/// hilo-emu): 10 ms resolves a slow-start round on the shortest paths the scenarios have.
constexpr double kTcpTracePeriodS = 0.01;

/// What a side measures of one connection end's sending half; empty: cannot measure.
struct TcpTraceSample
{
    uint32_t peer{0}; // peer id (sim/roles/peer-ids.h)
    std::optional<uint64_t> cwnd_bytes;
    std::optional<uint64_t> ssthresh_bytes; // empty while "infinite" (slow start never ended)
    std::optional<double> srtt_s;
    std::optional<double> min_rtt_s;
    std::optional<double> delivery_rate_bps;
    std::optional<uint64_t> bytes_acked;         // cumulatively acknowledged
    std::optional<uint64_t> retransmits;         // segments sent again
    std::optional<bool> in_slow_start;           // cwnd < ssthresh (Linux's tcp_in_slow_start)
    std::optional<uint64_t> hystart_train_exits; // slow-start exits by HyStart's ACK train
    std::optional<uint64_t> hystart_delay_exits; // and by its delay increase

    /// Same values (the peer included).
    bool operator==(const TcpTraceSample& o) const;
    bool operator!=(const TcpTraceSample& o) const { return !(*this == o); }
};

/// One row of tcp-trace.csv.
struct TcpTraceRow
{
    std::string arm;
    double time_s{0}; // from the run's start (simulated, or the emulation's epoch)
    std::string node; // the sending end: "learner", "worker-W" (topology order), "relay-R"
    std::string peer; // the other end, named the same way
    TcpTraceSample sample;
};

/// The header line of tcp-trace.csv (no newline).
const std::string& TcpTraceHeader();
/// `row` as a CSV line (no newline), in TcpTraceHeader's order.
std::string FormatTcpTraceRow(const TcpTraceRow& row);
/// The inverse of FormatTcpTraceRow; InvalidArgument naming the column for a malformed line.
hilo::StatusOr<TcpTraceRow> ParseTcpTraceRow(const std::string& line);
/// Every row of a file of TcpTraceHeader and rows (a last line cut short by a killed process is
/// left out); NotFound when there is no such file, Corruption naming file and line otherwise.
hilo::StatusOr<std::vector<TcpTraceRow>> ReadTcpTraceFile(const std::string& path);

/// A peer id's name in the trace ("learner", "relay-R", "worker-W").
std::string TcpTraceNodeName(uint32_t peer_id);

/// Keeps the rows of a sampler: per connection end, a row when its sample differs from the last.
class TcpTraceRecorder
{
  public:
    explicit TcpTraceRecorder(std::string arm)
      : m_arm(std::move(arm))
    {
    }
    /// The sample of `node`'s end towards sample.peer at `time_s`; returns the row when it was
    /// kept (differs from that end's previous sample), else nullptr.
    const TcpTraceRow* Add(double time_s, const std::string& node, const TcpTraceSample& sample);
    const std::vector<TcpTraceRow>& rows() const { return m_rows; }
    std::vector<TcpTraceRow> TakeRows() { return std::move(m_rows); }

  private:
    std::string m_arm;
    std::vector<TcpTraceRow> m_rows;
    std::map<std::pair<std::string, uint32_t>, TcpTraceSample> m_last; // by node and peer
};

} // namespace hilosim

#endif // HILOSIM_NET_TCP_TRACE_H
