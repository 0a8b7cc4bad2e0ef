#include "sim/drivers/process/node-setup.h"

#include "sim/run/arm-context-builder.h"

#include <boost/asio/ip/address.hpp>

#include <cstdio>
#include <fstream>

namespace hilosim
{

int
LoadArm(const NodeOptions& o, const ScenarioCatalog& catalog, std::ostream& err, ArmSetup* setup)
{
    auto loaded = LoadScenarioFile(o.scenario, o.overrides, catalog);
    if (!loaded.ok())
    {
        err << loaded.status().message() << "\nhilo-node: " << o.scenario
            << " is not a valid scenario\n";
        return kExitBadInput;
    }
    setup->loaded = std::move(*loaded);
    const ResolvedScenario& sc = setup->loaded.resolved;
    std::string names;
    bool found = false;
    for (size_t i = 0; i < sc.arms.size(); ++i)
    {
        names += (i ? ", " : "") + sc.arms[i].name;
        if (sc.arms[i].name == o.arm)
        {
            setup->arm_index = i;
            found = true;
        }
    }
    if (!found)
    {
        err << "hilo-node: --arm \"" << o.arm << "\" is not an arm of " << o.scenario
            << "; allowed: " << names << "\n";
        return kExitBadInput;
    }
    auto context = BuildArmContext(sc, sc.arms[setup->arm_index]);
    if (!context.ok())
    {
        err << "hilo-node: " << o.scenario << ": arm '" << o.arm
            << "': " << context.status().message() << "\n";
        return kExitBadInput;
    }
    setup->context = std::move(*context);
    setup->order = TopologyWorkerOrder(sc);
    return kExitOk;
}

std::unique_ptr<EventLogWriter>
OpenEvents(const NodeOptions& o, std::ostream& err, bool* ok)
{
    *ok = true;
    if (o.events.empty())
    {
        return nullptr;
    }
    auto w = EventLogWriter::Open(o.events);
    if (!w.ok())
    {
        err << "hilo-node: " << w.status().message() << "\n";
        *ok = false;
        return nullptr;
    }
    return std::move(*w);
}

bool
WritePortFile(const std::string& path, uint16_t port, std::ostream& err)
{
    if (path.empty())
    {
        return true;
    }
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::trunc);
        f << port << "\n";
        if (!f.flush())
        {
            err << "hilo-node: cannot write " << tmp << "\n";
            return false;
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
    {
        err << "hilo-node: cannot rename " << tmp << " to " << path << "\n";
        return false;
    }
    return true;
}

bool
ListenIsSafe(const std::string& who, const std::string& host, const NodeOptions& o,
             const ArmSetup& setup, std::ostream& err)
{
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(host, ec);
    if (!setup.key.empty() || o.insecure || (!ec && address.is_loopback()))
    {
        return true;
    }
    err << "hilo-node " << who << ": refusing to listen on " << host
        << " without --key-file: any host that can reach it could join the run as a worker or "
           "relay, feed the learner batches and be served its updates. Give every node of the "
           "run the same --key-file (for example one made with `openssl rand -hex 32`), or pass "
           "--insecure on a network you trust.\n";
    return false;
}

} // namespace hilosim
