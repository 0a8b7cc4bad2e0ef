#include "sim/net/cwnd-restart.h"

#include <algorithm>
#include <cmath>

namespace hilosim
{

CwndRestartResult
CwndAfterIdle(const CwndRestartInput& in)
{
    CwndRestartResult out;
    out.cwnd_bytes = in.cwnd_bytes;
    out.ssthresh_bytes = in.ssthresh_bytes;
    if (in.sets_cwnd_itself || !(in.rto_s > 0) || !(in.idle_s > in.rto_s))
    {
        return out;
    }
    out.restarted = true;
    if (!in.in_cwnd_reduction)
    {
        out.ssthresh_bytes = std::max(in.ssthresh_bytes, 0.75 * in.cwnd_bytes);
    }
    // Linux counts cwnd in packets and halves with a shift; the flow model's fluid window is
    // floored to whole segments the same way.
    const double unit = in.segment_bytes > 0 ? in.segment_bytes : 1.0;
    const auto whole = [unit](double bytes)
    { return static_cast<uint64_t>(std::floor(bytes / unit + 1e-9)); };
    const uint64_t restart = std::min(whole(in.initial_cwnd_bytes), whole(in.cwnd_bytes));
    uint64_t cwnd = whole(in.cwnd_bytes);
    double delta = in.idle_s;
    while ((delta -= in.rto_s) > 0 && cwnd > restart)
    {
        cwnd >>= 1;
    }
    cwnd = std::max<uint64_t>({cwnd, restart, 1});
    out.cwnd_bytes = static_cast<double>(cwnd) * unit;
    return out;
}

bool
CwndLimit(double cwndBytes, double ssthreshBytes, bool cwndLimited, double maxInFlightBytes)
{
    if (cwndLimited)
    {
        return true;
    }
    if (cwndBytes < ssthreshBytes)
    {
        return cwndBytes < 2 * maxInFlightBytes;
    }
    return false;
}

} // namespace hilosim
