// Admission: whether a TcpTransport listener takes a connection it just accepted, and what makes
// room for it. Members (connections past their hello) are never refused for want of room while
// fewer than max_connections of them are connected: only connections still in their hello count
// against the caps on pending hellos (all of them, and per source address), and when one is full
// the oldest of them (from the same source, for the per-source cap) is dropped for the new one.
// A flood of idle connections then delays a real peer by at most its own hello exchange. No I/O.
#ifndef HILOSIM_DRIVERS_PROCESS_ADMISSION_H
#define HILOSIM_DRIVERS_PROCESS_ADMISSION_H

#include <cstddef>
#include <string>
#include <vector>

namespace hilosim
{

struct AdmissionLimits
{
    size_t max_connections{256};       // members connected at once (accepted ones)
    size_t max_pending_hellos{256};    // accepted connections in their hello at once
    size_t max_pending_per_source{64}; // of those, from one source address
};

struct AdmissionDecision
{
    bool refuse{false}; // close the new connection at once (why: refuse_why)
    std::string refuse_why;
    bool evict{false}; // close pending[evict_index] first (why: evict_why)
    size_t evict_index{0};
    std::string evict_why;
};

/// The decision for a new connection from `source`, with `members` accepted members connected
/// and connections from `pending_sources` (oldest first) in their hello.
AdmissionDecision DecideAdmission(size_t members, const std::vector<std::string>& pending_sources,
                                  const std::string& source, const AdmissionLimits& limits);

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_ADMISSION_H
