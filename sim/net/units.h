// Unit strings at the scenario boundary: "100Mbps", "40ms", "64KiB".
//
// Scenario files spell every quantity with an explicit unit.
// These parsers convert such a string once, into ns3::DataRate, ns3::Time or a byte count, and
// report bad input as a hilo::Status naming the string and what is allowed. They never call the
// ns-3 string parsers on unchecked input: those abort the process on a malformed string.
//
// Grammar (whitespace around and between the parts is allowed):
//   quantity := number unit
//   number   := digits [ "." digits ] [ ("e"|"E") ["+"|"-"] digits ]
// Signs on the number are rejected with "must be positive" (rates) or "must not be negative"
// (times, byte counts) so that "-5Mbps" gets a message about the sign, not about syntax.
#ifndef HILO_SIM_NET_UNITS_H
#define HILO_SIM_NET_UNITS_H

#include "hilo/core/status.h"

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/type-id.h"

#include <cstdint>
#include <string>

namespace hilosim
{

/// Parses a data rate such as "100Mbps", "2.5 Gbps", "10MBps" (bytes per second).
/// Bit units: bps, kbps (or Kbps), Mbps, Gbps, Tbps (decimal, as ns-3). Byte units: Bps, kBps
/// (or KBps), MBps, GBps, TBps. The rate must be positive and a whole number of bits per second
/// after conversion (fractions of a bit per second are rounded to the nearest bit).
hilo::StatusOr<ns3::DataRate> ParseDataRate(const std::string& text);

/// Parses a non-negative duration such as "40ms", "1.5 s", "250us". Units: h, min, s, ms, us, ns.
/// Zero is allowed (a LAN link may have no modelled delay); a positive value that rounds to zero at
/// the simulator's time resolution is an error.
hilo::StatusOr<ns3::Time> ParseTime(const std::string& text);

/// Parses a byte count such as "64KiB", "10MB", "1500B". Units: B, kB (or KB), MB, GB, TB
/// (decimal) and KiB, MiB, GiB, TiB (binary). Fractions are rounded to the nearest byte.
hilo::StatusOr<uint64_t> ParseBytes(const std::string& text);

/// Resolves a TCP congestion-control name to its ns-3 TypeId. Accepts the ns-3 class name with or
/// without the namespace ("ns3::TcpCubic", "TcpCubic") and short lower-case names ("cubic",
/// "newreno", "bbr", "linuxreno", "dctcp", "vegas", "bic", "htcp", "westwood", "hybla",
/// "highspeed", "scalable", "veno", "yeah", "illinois", "ledbat", "lp").
hilo::StatusOr<ns3::TypeId> ParseTcpVariant(const std::string& text);

/// "100Mbps"-style rendering used in messages and metadata (exact, no rounding beyond 1 bps).
std::string FormatDataRate(ns3::DataRate rate);

} // namespace hilosim

#endif // HILO_SIM_NET_UNITS_H
