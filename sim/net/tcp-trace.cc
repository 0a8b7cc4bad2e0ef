#include "sim/net/tcp-trace.h"

#include "sim/roles/peer-ids.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <type_traits>

namespace hilosim
{
namespace
{

constexpr size_t kColumns = 14;

std::string
Number(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.9g", v);
    return buf;
}

template<typename T>
std::string
Cell(const std::optional<T>& v)
{
    if (!v)
        return "";
    if constexpr (std::is_same_v<T, double>)
        return Number(*v);
    else if constexpr (std::is_same_v<T, bool>)
        return *v ? "1" : "0";
    else
        return std::to_string(*v);
}

bool
ParseCell(const std::string& text, std::optional<double>* v)
{
    if (text.empty())
        return v->reset(), true;
    char* end = nullptr;
    errno = 0;
    const double d = std::strtod(text.c_str(), &end);
    if (errno != 0 || end != text.c_str() + text.size())
        return false;
    *v = d;
    return true;
}

bool
ParseCell(const std::string& text, std::optional<uint64_t>* v)
{
    if (text.empty())
        return v->reset(), true;
    if (text.find_first_not_of("0123456789") != std::string::npos)
        return false;
    char* end = nullptr;
    errno = 0;
    const unsigned long long u = std::strtoull(text.c_str(), &end, 10);
    if (errno != 0 || end != text.c_str() + text.size())
        return false;
    *v = u;
    return true;
}

bool
ParseCell(const std::string& text, std::optional<bool>* v)
{
    if (text.empty())
        return v->reset(), true;
    if (text != "0" && text != "1")
        return false;
    *v = text == "1";
    return true;
}

std::vector<std::string>
Split(const std::string& line)
{
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream in(line);
    while (std::getline(in, cell, ','))
        cells.push_back(cell);
    if (!line.empty() && line.back() == ',')
        cells.emplace_back();
    return cells;
}

} // namespace

bool
TcpTraceSample::operator==(const TcpTraceSample& o) const
{
    return peer == o.peer && cwnd_bytes == o.cwnd_bytes && ssthresh_bytes == o.ssthresh_bytes &&
           srtt_s == o.srtt_s && min_rtt_s == o.min_rtt_s &&
           delivery_rate_bps == o.delivery_rate_bps && bytes_acked == o.bytes_acked &&
           retransmits == o.retransmits && in_slow_start == o.in_slow_start &&
           hystart_train_exits == o.hystart_train_exits &&
           hystart_delay_exits == o.hystart_delay_exits;
}

const std::string&
TcpTraceHeader()
{
    static const std::string kHeader =
        "arm,time_s,node,peer,cwnd_bytes,ssthresh_bytes,srtt_s,min_rtt_s,delivery_rate_bps,"
        "bytes_acked,retransmits,in_slow_start,hystart_train_exits,hystart_delay_exits";
    return kHeader;
}

std::string
FormatTcpTraceRow(const TcpTraceRow& row)
{
    const TcpTraceSample& s = row.sample;
    std::string line = row.arm + "," + Number(row.time_s) + "," + row.node + "," + row.peer;
    for (const std::string& cell :
         {Cell(s.cwnd_bytes), Cell(s.ssthresh_bytes), Cell(s.srtt_s), Cell(s.min_rtt_s),
          Cell(s.delivery_rate_bps), Cell(s.bytes_acked), Cell(s.retransmits),
          Cell(s.in_slow_start), Cell(s.hystart_train_exits), Cell(s.hystart_delay_exits)})
    {
        line += "," + cell;
    }
    return line;
}

hilo::StatusOr<TcpTraceRow>
ParseTcpTraceRow(const std::string& line)
{
    const std::vector<std::string> c = Split(line);
    if (c.size() != kColumns)
    {
        return hilo::Status::InvalidArgument("expected " + std::to_string(kColumns) +
                                             " columns, got " + std::to_string(c.size()));
    }
    TcpTraceRow row;
    row.arm = c[0];
    row.node = c[2];
    row.peer = c[3];
    std::optional<double> time;
    if (!ParseCell(c[1], &time) || !time)
        return hilo::Status::InvalidArgument("time_s: not a number: \"" + c[1] + "\"");
    row.time_s = *time;
    TcpTraceSample& s = row.sample;
    const bool ok = ParseCell(c[4], &s.cwnd_bytes) && ParseCell(c[5], &s.ssthresh_bytes) &&
                    ParseCell(c[6], &s.srtt_s) && ParseCell(c[7], &s.min_rtt_s) &&
                    ParseCell(c[8], &s.delivery_rate_bps) && ParseCell(c[9], &s.bytes_acked) &&
                    ParseCell(c[10], &s.retransmits) && ParseCell(c[11], &s.in_slow_start) &&
                    ParseCell(c[12], &s.hystart_train_exits) &&
                    ParseCell(c[13], &s.hystart_delay_exits);
    if (!ok)
        return hilo::Status::InvalidArgument("a value is not a number of its column's kind");
    return row;
}

hilo::StatusOr<std::vector<TcpTraceRow>>
ReadTcpTraceFile(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        return hilo::Status::NotFound(path + ": cannot open");
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    // A process killed mid-write leaves its last line without its newline: left out.
    in.clear();
    in.seekg(-1, std::ios::end);
    char last = '\n';
    if (in.get(last) && last != '\n' && !lines.empty())
        lines.pop_back();
    std::vector<TcpTraceRow> rows;
    for (size_t i = 0; i < lines.size(); ++i)
    {
        if (lines[i] == TcpTraceHeader())
            continue; // a restarted process writes the header again
        auto row = ParseTcpTraceRow(lines[i]);
        if (!row.ok())
        {
            return hilo::Status::Corruption(path + ":" + std::to_string(i + 1) + ": " +
                                            row.status().message());
        }
        rows.push_back(std::move(*row));
    }
    return rows;
}

std::string
TcpTraceNodeName(uint32_t peer_id)
{
    if (peer_id == kLearnerPeerId)
        return "learner";
    if (IsRelayPeerId(peer_id))
        return "relay-" + std::to_string(peer_id - kRelayPeerIdBase);
    return "worker-" + std::to_string(peer_id);
}

const TcpTraceRow*
TcpTraceRecorder::Add(double time_s, const std::string& node, const TcpTraceSample& sample)
{
    auto [it, inserted] = m_last.try_emplace({node, sample.peer}, sample);
    if (!inserted)
    {
        if (it->second == sample)
            return nullptr;
        it->second = sample;
    }
    m_rows.push_back({m_arm, time_s, node, TcpTraceNodeName(sample.peer), sample});
    return &m_rows.back();
}

} // namespace hilosim
