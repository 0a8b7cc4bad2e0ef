// TcpInfoSampler: a node's side of the TCP trace (hilo-emu run --trace-tcp; sim/net/tcp-trace.h).
// Every period of the run's clock it reads the TCP_INFO of each of the transport's connections
// (tcp-info.h) and appends a row to the node's trace file for every connection end whose state
// changed, flushed at once (a killed node leaves what it sampled; a restarted one appends).
// hilo-emu gathers the nodes' files of an arm into the run's tcp-trace.csv.
//
// HyStart's exits are not in TCP_INFO: the node writes its network namespace's TcpExt HyStart
// counters (TCPHystartTrainDetect, ...) when it starts sampling and when it stops, to a sidecar
// next to the trace (FILE.hystart.csv: counter,at_start,at_end). Under --network ns3 a namespace
// holds that node alone; under --network direct they are the whole host's.
#ifndef HILOSIM_DRIVERS_PROCESS_TCP_INFO_SAMPLER_H
#define HILOSIM_DRIVERS_PROCESS_TCP_INFO_SAMPLER_H

#include "sim/drivers/process/tcp-transport.h"
#include "sim/net/tcp-trace.h"

#include "hilo/core/status.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hilosim
{

class TcpInfoSampler
{
  public:
    /// Samples `transport` (which must outlive Stop()) as node `node` (TcpTraceNodeName) of arm
    /// `arm`, into `path` (appended; the header written when the file is new). `now_s`: the
    /// run's clock (seconds from its epoch). InvalidArgument when the file cannot be opened.
    static hilo::StatusOr<std::unique_ptr<TcpInfoSampler>> Open(
        boost::asio::io_context& io, const TcpTransport* transport, const std::string& arm,
        const std::string& node, std::function<double()> now_s, const std::string& path,
        double period_s);
    ~TcpInfoSampler();

    /// Samples every period from now until Stop() (rows from the run's epoch on).
    void Start();
    /// A last sample, then the sidecar of HyStart counters. Idempotent.
    void Stop();

  private:
    TcpInfoSampler(boost::asio::io_context& io, const TcpTransport* transport,
                   const std::string& arm, std::string node, std::function<double()> now_s,
                   std::FILE* file, std::string path, double period_s);
    void Sample();
    void Schedule();

    const TcpTransport* m_transport;
    std::string m_node;
    std::function<double()> m_nowS;
    std::FILE* m_file;
    std::string m_path;
    double m_periodS;
    TcpTraceRecorder m_recorder;
    boost::asio::steady_timer m_timer;
    std::chrono::steady_clock::time_point m_next; // the next sample
    std::map<std::string, uint64_t> m_hystartAtStart;
    bool m_started{false};
    bool m_stopped{false};
};

/// The rows of every node's trace in `dir` (its *.tcp-trace.csv files), in time order (then node
/// and peer). Corruption naming the file for an unreadable one.
hilo::StatusOr<std::vector<TcpTraceRow>> ReadNodeTcpTraces(const std::string& dir);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_TCP_INFO_SAMPLER_H
