#include "sim/drivers/process/node-runner.h"

#include "sim/drivers/process/arm-frame-limit.h"
#include "sim/drivers/process/learner-node.h"
#include "sim/drivers/process/node-setup.h"
#include "sim/drivers/process/peer-auth.h"
#include "sim/drivers/process/relay-node.h"
#include "sim/drivers/process/worker-node.h"

#include "hilo/sync/publisher.h"

namespace hilosim
{

bool
SplitHostPort(const std::string& text, std::string* host, uint16_t* port)
{
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 >= text.size())
    {
        return false;
    }
    const std::string digits = text.substr(colon + 1);
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 5)
    {
        return false;
    }
    const unsigned long value = std::stoul(digits);
    if (value > 65535)
    {
        return false;
    }
    *host = text.substr(0, colon);
    *port = static_cast<uint16_t>(value);
    return true;
}

int
RunNode(const NodeOptions& o, const ScenarioCatalog& catalog, std::ostream& err)
{
    if (o.role != "learner" && o.role != "worker" && o.role != "relay")
    {
        err << "hilo-node: unknown role \"" << o.role << "\"; allowed: learner, worker, relay\n";
        return kExitBadInput;
    }
    if (o.stall_timeout_s <= 0)
    {
        err << "hilo-node: --stall-timeout must be positive, got " << o.stall_timeout_s << "\n";
        return kExitBadInput;
    }
    if (!(o.hello_timeout_s > 0))
    {
        err << "hilo-node: --hello-timeout must be positive, got " << o.hello_timeout_s << "\n";
        return kExitBadInput;
    }
    ArmSetup setup;
    const int loaded = LoadArm(o, catalog, err, &setup);
    if (loaded != kExitOk)
    {
        return loaded;
    }
    if (!o.key_file.empty())
    {
        auto key = PeerAuth::ReadKeyFile(o.key_file);
        if (!key.ok())
        {
            err << "hilo-node: " << key.status().message() << "\n";
            return kExitBadInput;
        }
        setup.key = std::move(*key);
    }
    auto limit = ArmFrameLimit(*setup.context, hilo::PublisherOptions{});
    if (!limit.ok())
    {
        err << "hilo-node: " << o.scenario << ": arm '" << o.arm
            << "': " << limit.status().message() << "\n";
        return kExitBadInput;
    }
    setup.frame_limit = *limit;
    if (o.role == "learner")
        return RunLearner(o, setup, err);
    if (o.role == "worker")
        return RunWorker(o, setup, err);
    return RunRelay(o, setup, err);
}

} // namespace hilosim
