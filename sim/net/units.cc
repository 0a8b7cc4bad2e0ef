#include "sim/net/units.h"

#include "ns3/tcp-congestion-ops.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

namespace hilosim
{
namespace
{

struct UnitScale
{
    const char* name;
    long double scale; // multiples of the base unit (bit/s, second, byte)
};

const std::vector<UnitScale>&
RateUnits()
{
    static const std::vector<UnitScale> units = {
        {"bps", 1.0L},  {"kbps", 1e3L},  {"Kbps", 1e3L}, {"Mbps", 1e6L},
        {"Gbps", 1e9L}, {"Tbps", 1e12L}, {"Bps", 8.0L},  {"kBps", 8e3L},
        {"KBps", 8e3L}, {"MBps", 8e6L},  {"GBps", 8e9L}, {"TBps", 8e12L},
    };
    return units;
}

const std::vector<UnitScale>&
TimeUnits()
{
    static const std::vector<UnitScale> units = {
        {"h", 3600.0L}, {"min", 60.0L}, {"s", 1.0L}, {"ms", 1e-3L}, {"us", 1e-6L}, {"ns", 1e-9L},
    };
    return units;
}

const std::vector<UnitScale>&
ByteUnits()
{
    static const std::vector<UnitScale> units = {
        {"B", 1.0L},
        {"kB", 1e3L},
        {"KB", 1e3L},
        {"MB", 1e6L},
        {"GB", 1e9L},
        {"TB", 1e12L},
        {"KiB", 1024.0L},
        {"MiB", 1024.0L * 1024.0L},
        {"GiB", 1024.0L * 1024.0L * 1024.0L},
        {"TiB", 1024.0L * 1024.0L * 1024.0L * 1024.0L},
    };
    return units;
}

std::string
AllowedList(const std::vector<UnitScale>& units)
{
    std::string out;
    for (const auto& u : units)
    {
        if (!out.empty())
        {
            out += ", ";
        }
        out += u.name;
    }
    return out;
}

/// A number and a unit split out of "  2.5 Mbps ", before any range check.
struct Quantity
{
    bool negative{false};
    long double value{0};
    std::string unit;
};

/// Splits `text` into sign, number and unit; `what` names the kind of quantity in errors.
hilo::StatusOr<Quantity>
SplitQuantity(const std::string& text, const char* what, const char* example,
              const std::vector<UnitScale>& units)
{
    const std::string quoted = "\"" + text + "\"";
    size_t i = 0;
    const size_t n = text.size();
    auto skipSpace = [&]()
    {
        while (i < n && std::isspace(static_cast<unsigned char>(text[i])))
        {
            ++i;
        }
    };
    skipSpace();
    Quantity q;
    if (i < n && (text[i] == '-' || text[i] == '+'))
    {
        q.negative = text[i] == '-';
        ++i;
        skipSpace();
    }
    const size_t numberStart = i;
    auto digits = [&]()
    {
        size_t start = i;
        while (i < n && std::isdigit(static_cast<unsigned char>(text[i])))
        {
            ++i;
        }
        return i - start;
    };
    size_t intDigits = digits();
    size_t fracDigits = 0;
    if (i < n && text[i] == '.')
    {
        ++i;
        fracDigits = digits();
    }
    if (intDigits + fracDigits == 0)
    {
        return hilo::Status::InvalidArgument(std::string(what) + " " + quoted +
                                             " does not start with a number (expected a number "
                                             "followed by a unit, e.g. \"" +
                                             example + "\")");
    }
    if (i < n && (text[i] == 'e' || text[i] == 'E'))
    {
        // An exponent only if digits follow; otherwise "e..." is the start of a unit name.
        size_t save = i;
        ++i;
        if (i < n && (text[i] == '+' || text[i] == '-'))
        {
            ++i;
        }
        if (digits() == 0)
        {
            i = save;
        }
    }
    const std::string number = text.substr(numberStart, i - numberStart);
    skipSpace();
    const size_t unitStart = i;
    while (i < n && !std::isspace(static_cast<unsigned char>(text[i])))
    {
        ++i;
    }
    q.unit = text.substr(unitStart, i - unitStart);
    skipSpace();
    if (i != n)
    {
        return hilo::Status::InvalidArgument(std::string(what) + " " + quoted +
                                             " has trailing text after the unit (expected a "
                                             "number followed by one unit, e.g. \"" +
                                             example + "\")");
    }
    if (q.unit.empty())
    {
        return hilo::Status::InvalidArgument(std::string(what) + " " + quoted +
                                             " has no unit (allowed units: " + AllowedList(units) +
                                             ")");
    }
    std::istringstream in(number);
    in.imbue(std::locale::classic());
    in >> q.value;
    if (in.fail() || !std::isfinite(static_cast<double>(q.value)))
    {
        return hilo::Status::InvalidArgument(std::string(what) + " " + quoted +
                                             " has a number out of range");
    }
    return q;
}

hilo::StatusOr<long double>
ScaleOf(const std::string& text, const char* what, const std::string& unit,
        const std::vector<UnitScale>& units)
{
    for (const auto& u : units)
    {
        if (unit == u.name)
        {
            return u.scale;
        }
    }
    return hilo::Status::InvalidArgument(std::string(what) + " \"" + text +
                                         "\" has unknown unit \"" + unit +
                                         "\" (allowed units: " + AllowedList(units) + ")");
}

} // namespace

hilo::StatusOr<ns3::DataRate>
ParseDataRate(const std::string& text)
{
    auto q = SplitQuantity(text, "data rate", "100Mbps", RateUnits());
    if (!q.ok())
    {
        return q.status();
    }
    auto scale = ScaleOf(text, "data rate", q->unit, RateUnits());
    if (!scale.ok())
    {
        return scale.status();
    }
    if (q->negative || q->value == 0)
    {
        return hilo::Status::InvalidArgument("data rate \"" + text + "\" must be positive");
    }
    long double bps = std::round(q->value * *scale);
    if (bps < 1)
    {
        return hilo::Status::InvalidArgument("data rate \"" + text +
                                             "\" is below 1 bps (must be positive)");
    }
    if (bps > static_cast<long double>(std::numeric_limits<uint64_t>::max() / 2))
    {
        return hilo::Status::InvalidArgument("data rate \"" + text + "\" is too large");
    }
    return ns3::DataRate(static_cast<uint64_t>(bps));
}

hilo::StatusOr<ns3::Time>
ParseTime(const std::string& text)
{
    auto q = SplitQuantity(text, "duration", "40ms", TimeUnits());
    if (!q.ok())
    {
        return q.status();
    }
    auto scale = ScaleOf(text, "duration", q->unit, TimeUnits());
    if (!scale.ok())
    {
        return scale.status();
    }
    if (q->negative && q->value != 0)
    {
        return hilo::Status::InvalidArgument("duration \"" + text + "\" must not be negative");
    }
    long double seconds = q->value * *scale;
    // Time holds int64 ticks; a billion seconds (~31 years) is far beyond any scenario and far
    // inside the range at every resolution down to nanoseconds.
    if (seconds > 1e9L)
    {
        return hilo::Status::InvalidArgument("duration \"" + text +
                                             "\" is too large (at most 1e9 s)");
    }
    // Convert through the resolution's own unit to avoid double rounding of seconds.
    const long double ticksPerSecond =
        static_cast<long double>(ns3::Time::FromInteger(1, ns3::Time::S).GetTimeStep());
    long double ticks = std::round(seconds * ticksPerSecond);
    if (seconds > 0 && ticks < 1)
    {
        return hilo::Status::InvalidArgument("duration \"" + text +
                                             "\" is below the simulator's time resolution");
    }
    return ns3::TimeStep(static_cast<uint64_t>(ticks));
}

hilo::StatusOr<uint64_t>
ParseBytes(const std::string& text)
{
    auto q = SplitQuantity(text, "byte count", "64KiB", ByteUnits());
    if (!q.ok())
    {
        return q.status();
    }
    auto scale = ScaleOf(text, "byte count", q->unit, ByteUnits());
    if (!scale.ok())
    {
        return scale.status();
    }
    if (q->negative && q->value != 0)
    {
        return hilo::Status::InvalidArgument("byte count \"" + text + "\" must not be negative");
    }
    long double bytes = std::round(q->value * *scale);
    if (bytes > static_cast<long double>(std::numeric_limits<uint64_t>::max() / 2))
    {
        return hilo::Status::InvalidArgument("byte count \"" + text + "\" is too large");
    }
    return static_cast<uint64_t>(bytes);
}

hilo::StatusOr<ns3::TypeId>
ParseTcpVariant(const std::string& text)
{
    static const std::vector<std::pair<const char*, const char*>> shortNames = {
        {"newreno", "TcpNewReno"},
        {"linuxreno", "TcpLinuxReno"},
        {"cubic", "TcpCubic"},
        {"bbr", "TcpBbr"},
        {"dctcp", "TcpDctcp"},
        {"vegas", "TcpVegas"},
        {"bic", "TcpBic"},
        {"htcp", "TcpHtcp"},
        {"westwood", "TcpWestwood"},
        {"hybla", "TcpHybla"},
        {"highspeed", "TcpHighSpeed"},
        {"scalable", "TcpScalable"},
        {"veno", "TcpVeno"},
        {"yeah", "TcpYeah"},
        {"illinois", "TcpIllinois"},
        {"ledbat", "TcpLedbat"},
        {"lp", "TcpLp"},
    };
    std::string name = text;
    for (const auto& [shortName, className] : shortNames)
    {
        if (text == shortName)
        {
            name = className;
        }
    }
    if (name.rfind("ns3::", 0) != 0)
    {
        name = "ns3::" + name;
    }
    // Debian's ns-3 3.37 registers TcpCubic with TcpSocketBase as its parent, so IsChildOf alone
    // would reject it: the known classes are accepted by name.
    bool known = false;
    for (const auto& [shortName, className] : shortNames)
    {
        known = known || name == std::string("ns3::") + className;
    }
    ns3::TypeId tid;
    if (!ns3::TypeId::LookupByNameFailSafe(name, &tid) ||
        !(known || tid.IsChildOf(ns3::TcpCongestionOps::GetTypeId())))
    {
        std::string allowed;
        for (const auto& [shortName, className] : shortNames)
        {
            allowed += allowed.empty() ? "" : ", ";
            allowed += shortName;
        }
        return hilo::Status::InvalidArgument("TCP variant \"" + text +
                                             "\" is not a TCP congestion control of this ns-3 "
                                             "build (allowed: " +
                                             allowed + ", or an ns-3 class name like TcpCubic)");
    }
    return tid;
}

std::string
FormatDataRate(ns3::DataRate rate)
{
    uint64_t bps = rate.GetBitRate();
    static const std::vector<std::pair<uint64_t, const char*>> units = {
        {1000000000000ULL, "Tbps"},
        {1000000000ULL, "Gbps"},
        {1000000ULL, "Mbps"},
        {1000ULL, "kbps"},
    };
    for (const auto& [scale, name] : units)
    {
        if (bps >= scale && bps % scale == 0)
        {
            return std::to_string(bps / scale) + name;
        }
    }
    return std::to_string(bps) + "bps";
}

} // namespace hilosim
