#include "sim/drivers/process/tcp-info-sampler.h"

#include "sim/drivers/process/tcp-info.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

namespace hilosim
{

hilo::StatusOr<std::unique_ptr<TcpInfoSampler>>
TcpInfoSampler::Open(boost::asio::io_context& io, const TcpTransport* transport,
                     const std::string& arm, const std::string& node, std::function<double()> now_s,
                     const std::string& path, double period_s)
{
    std::error_code ec;
    const bool fresh =
        !std::filesystem::exists(path, ec) || std::filesystem::file_size(path, ec) == 0;
    std::FILE* file = std::fopen(path.c_str(), "a");
    if (file == nullptr)
        return hilo::Status::InvalidArgument("cannot open the TCP trace " + path);
    if (fresh)
    {
        std::fputs((TcpTraceHeader() + "\n").c_str(), file);
        std::fflush(file);
    }
    return std::unique_ptr<TcpInfoSampler>(
        new TcpInfoSampler(io, transport, arm, node, std::move(now_s), file, path, period_s));
}

TcpInfoSampler::TcpInfoSampler(boost::asio::io_context& io, const TcpTransport* transport,
                               const std::string& arm, std::string node,
                               std::function<double()> now_s, std::FILE* file, std::string path,
                               double period_s)
  : m_transport(transport)
  , m_node(std::move(node))
  , m_nowS(std::move(now_s))
  , m_file(file)
  , m_path(std::move(path))
  , m_periodS(period_s)
  , m_recorder(arm)
  , m_timer(io)
{
}

TcpInfoSampler::~TcpInfoSampler()
{
    Stop();
    std::fclose(m_file);
}

void
TcpInfoSampler::Start()
{
    if (m_started)
        return;
    m_started = true;
    m_hystartAtStart = ReadHyStartCounters();
    m_next = std::chrono::steady_clock::now();
    Schedule();
}

void
TcpInfoSampler::Schedule()
{
    // On a fixed grid from Start(), whatever a sample took.
    m_next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(m_periodS));
    m_timer.expires_at(m_next);
    m_timer.async_wait(
        [this](const boost::system::error_code& ec)
        {
            if (ec || m_stopped)
                return;
            Sample();
            Schedule();
        });
}

void
TcpInfoSampler::Sample()
{
    const double now_s = m_nowS();
    if (now_s < 0)
        return; // before the run's epoch (set-up): the trace starts with the roles, at 0
    bool wrote = false;
    for (const auto& [peer, fd] : m_transport->ConnectedSockets())
    {
        const auto sample = ReadTcpInfo(fd, peer);
        if (!sample)
            continue;
        if (const TcpTraceRow* row = m_recorder.Add(now_s, m_node, *sample))
        {
            std::fputs((FormatTcpTraceRow(*row) + "\n").c_str(), m_file);
            wrote = true;
        }
    }
    if (wrote)
        std::fflush(m_file);
    m_recorder.TakeRows(); // written: the recorder only keeps each end's last sample
}

void
TcpInfoSampler::Stop()
{
    if (m_stopped || !m_started)
    {
        m_stopped = true;
        return;
    }
    m_stopped = true;
    m_timer.cancel();
    Sample();
    const std::map<std::string, uint64_t> end = ReadHyStartCounters();
    if (std::FILE* side = std::fopen((m_path + ".hystart.csv").c_str(), "w"))
    {
        std::fputs("counter,at_start,at_end\n", side);
        for (const auto& [name, value] : end)
        {
            const auto start = m_hystartAtStart.find(name);
            std::fprintf(side, "%s,%llu,%llu\n", name.c_str(),
                         static_cast<unsigned long long>(
                             start == m_hystartAtStart.end() ? 0 : start->second),
                         static_cast<unsigned long long>(value));
        }
        std::fclose(side);
    }
}

hilo::StatusOr<std::vector<TcpTraceRow>>
ReadNodeTcpTraces(const std::string& dir)
{
    std::vector<std::string> files;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    {
        const std::string name = entry.path().filename().string();
        const std::string suffix = ".tcp-trace.csv";
        if (name.size() > suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
            files.push_back(entry.path().string());
    }
    if (ec)
        return hilo::Status::InvalidArgument("cannot list " + dir + ": " + ec.message());
    std::sort(files.begin(), files.end());
    std::vector<TcpTraceRow> rows;
    for (const std::string& file : files)
    {
        auto read = ReadTcpTraceFile(file);
        if (!read.ok())
            return read.status();
        rows.insert(rows.end(), read->begin(), read->end());
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const TcpTraceRow& a, const TcpTraceRow& b)
                     {
                         if (a.time_s != b.time_s)
                             return a.time_s < b.time_s;
                         return a.node != b.node ? a.node < b.node : a.peer < b.peer;
                     });
    return rows;
}

} // namespace hilosim
