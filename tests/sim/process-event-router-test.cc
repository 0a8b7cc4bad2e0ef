// The process driver's EventRouter (sim/drivers/process/event-router.h) without sockets: what
// arrives before the role starts is kept and handed over in order, a peer past the early cap is
// disconnected, and a message the role refuses costs only its sender.
#include "sim/drivers/process/event-router.h"
#include "sim/drivers/process/peer-limits.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hilosim
{
namespace
{

struct Recorder
{
    bool started{false};
    int progress{0};
    std::vector<std::string> seen;      // what the role heard, in order
    std::vector<uint32_t> disconnected; // peers the router closed
    EventRouter router{[this]() { ++progress; },
                       [this](uint32_t peer, const std::string&) { disconnected.push_back(peer); }};

    Recorder()
    {
        router.SetHandlers(
            {[this]() { return started; },
             [](uint32_t, const RoleMessage& m) { return m.type == 7; },
             [this](uint32_t peer, const RoleMessage& m)
             {
                 seen.push_back("message " + std::to_string(peer) + " " + std::string(m.payload));
                 return m.payload == "bad" ? hilo::Status::Corruption("bad") : hilo::Status::Ok();
             },
             [this](uint32_t peer) { seen.push_back("connected " + std::to_string(peer)); },
             [this](uint32_t peer, bool error)
             { seen.push_back("closed " + std::to_string(peer) + (error ? " error" : "")); }});
    }

    void Message(uint32_t peer, uint32_t type, const std::string& payload)
    {
        RoleMessage m;
        m.type = type;
        m.payload = payload;
        router.OnMessage(peer, m);
    }
};

TEST(EventRouter, KeepsWhatArrivesBeforeTheRoleStartsAndHandsItOverInOrder)
{
    Recorder r;
    r.router.OnConnected(1);
    r.Message(1, 1, "a");
    r.router.OnClosed(2, /*error=*/true);
    r.Message(1, 7, "b"); // progress counts even before the role starts
    EXPECT_TRUE(r.seen.empty());
    EXPECT_EQ(r.router.early_bytes(), 2u);
    r.started = true;
    r.router.RoleStarted();
    EXPECT_EQ(r.seen, (std::vector<std::string>{"connected 1", "message 1 a", "closed 2 error",
                                                "message 1 b"}));
    EXPECT_EQ(r.router.early_bytes(), 0u);
    EXPECT_EQ(r.progress, 1);
    r.Message(3, 1, "c"); // now straight to the role
    EXPECT_EQ(r.seen.back(), "message 3 c");
}

TEST(EventRouter, AMessageTheRoleRefusesCostsOnlyItsSender)
{
    Recorder r;
    r.started = true;
    r.Message(1, 1, "bad");
    r.Message(2, 1, "good");
    EXPECT_EQ(r.disconnected, std::vector<uint32_t>{1});
    EXPECT_EQ(r.seen.back(), "message 2 good");
}

TEST(EventRouter, APeerPastTheEarlyCapIsDisconnected)
{
    Recorder r;
    for (size_t i = 0; i < kMaxEarlyMessages; ++i)
        r.Message(1, 1, "x");
    EXPECT_TRUE(r.disconnected.empty());
    r.Message(2, 1, "y");
    EXPECT_EQ(r.disconnected, std::vector<uint32_t>{2});
    const std::string big(kMaxEarlyBytes, 'z');
    Recorder bytes;
    bytes.Message(3, 1, big); // exactly the cap: kept
    bytes.Message(4, 1, "w"); // one byte past it
    EXPECT_EQ(bytes.disconnected, std::vector<uint32_t>{4});
}

} // namespace
} // namespace hilosim
