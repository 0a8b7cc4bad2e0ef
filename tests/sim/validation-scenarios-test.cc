// The scenarios the emulation runs (scenarios/validation/emu-*.textproto) describe the system it
// measures, so that the simulator side of each validation row models the same thing. A relay on
// kernel TCP runs on the process driver, which cannot forward an update while it arrives: its
// relays store and forward, and so must those scenarios' relays (the simulator streams by
// default, which finishes a worker's copy one LAN transfer sooner than the measured relay).
#include "sim/cli/catalog.h"
#include "sim/drivers/process/process-port.h"
#include "sim/roles/peer-ids.h"
#include "sim/scenario/scenario-loader.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <filesystem>
#include <string>

namespace hilosim
{
namespace
{

TEST(ValidationScenarios, ProcessDriverRelaysCannotStream)
{
    boost::asio::io_context io;
    ProcessPort port(io, nullptr, std::chrono::steady_clock::now(), [] {});
    const hilo::Status s = port.Forward(kLearnerPeerId, 1, {0, 1});
    EXPECT_EQ(s.code(), hilo::StatusCode::kNotSupported) << s.message();
}

TEST(ValidationScenarios, EmulatedRelaysStoreAndForward)
{
    int relays = 0;
    for (const auto& e : std::filesystem::directory_iterator(std::string(HILO_SOURCE_DIR) +
                                                             "/scenarios/validation"))
    {
        const std::string name = e.path().filename().string();
        if (name.rfind("emu-", 0) != 0 || e.path().extension() != ".textproto")
            continue;
        SCOPED_TRACE(name);
        auto loaded = LoadScenarioFile(e.path().string(), {}, CurrentCatalog());
        ASSERT_TRUE(loaded.ok()) << loaded.status().message();
        if (loaded->resolved.network.topology != TopologyKind::kRelay)
            continue;
        ++relays;
        EXPECT_TRUE(loaded->resolved.network.relay_store_and_forward)
            << "the emulation's relays store and forward; a streaming relay here is not the "
               "one measured";
    }
    EXPECT_GE(relays, 1); // emu-relay.textproto
}

} // namespace
} // namespace hilosim
