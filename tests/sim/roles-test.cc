// The roles under a fake driver: a RolePort whose clock only moves when the test says so and whose
// transport hands messages straight to the other roles' HandleMessage. No ns-3, no sockets: the
// roles' protocol (rounds, training, broadcast, welcome and catch-up of a restarted worker) is
// checked step by step and exactly.
#include "sim/cli/catalog.h"
#include "sim/roles/learner-role.h"
#include "sim/roles/peer-ids.h"
#include "sim/roles/relay-role.h"
#include "sim/roles/role-messages.h"
#include "sim/roles/worker-role.h"
#include "sim/run/arm-context-builder.h"
#include "sim/scenario/scenario-loader.h"

#include "hilo/wire/messages.h"
#include "models/trajectory-batch.h"

#include "tests/sim/scenario-test-util.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

namespace hilosim
{
namespace
{

const char* kScenario = R"(
name: "roles"
seed: 3
workload {
  kind: "distill"
  steps: 5
  model { vocab: 32 d_model: 32 layers: 1 heads: 2 context: 24 }
  lora { rank: 4 }
  prompts_per_worker: 2
  gen_tokens: 6
  eval_prompts: 8
  eval_every: 5
}
optimizer { kind: "adamw" lr: 0.01 }
learner { gpu: "H100-SXM" }
workers { count: 2 gpu: "A10G" }
network { topology: "star" worker_link { bandwidth: "1Gbps" delay: "1ms" } }
arms { name: "hilo" strategy: "hilo" compressor: "spar" budget: "20%" }
)";

// One shared event queue: timers and message deliveries in time order, FIFO at equal times.
class FakeWorld
{
  public:
    struct Event
    {
        double at;
        uint64_t seq;
        std::function<void()> fn;
    };

    double now{0};
    double message_delay_s{0.001};
    std::map<uint32_t, std::function<void(uint32_t, const RoleMessage&)>> inbox; // by peer id
    std::map<uint32_t, bool> down;                                               // peer unplugged
    std::vector<std::pair<uint32_t, uint32_t>> sent; // (to, type), in order

    void Schedule(double delay, std::function<void()> fn)
    {
        queue.push_back({now + delay, next_seq++, std::move(fn)});
    }

    /// Runs events until none is left or `until` is passed.
    void Run(double until = 1e9)
    {
        while (!queue.empty())
        {
            auto it = std::min_element(queue.begin(), queue.end(),
                                       [](const Event& a, const Event& b)
                                       { return a.at != b.at ? a.at < b.at : a.seq < b.seq; });
            if (it->at > until)
            {
                now = until; // time passes even when nothing happens
                return;
            }
            Event e = std::move(*it);
            queue.erase(it);
            now = e.at;
            e.fn();
        }
    }

    std::deque<Event> queue;
    uint64_t next_seq{0};
};

class FakePort : public RolePort
{
  public:
    FakePort(FakeWorld* world, uint32_t self)
      : m_world(world)
      , m_self(self)
    {
    }
    double Now() const override { return m_world->now; }
    bool RealTime() const override { return false; }
    void After(double modelled_s, ComputePhase, double, std::function<void()> fn) override
    {
        m_world->Schedule(modelled_s,
                          [alive = m_alive, fn = std::move(fn)]()
                          {
                              if (*alive)
                                  fn();
                          });
    }
    /// The process behind this port died: its pending timers never fire.
    void Kill() { *m_alive = false; }
    hilo::Status Send(uint32_t peer, uint32_t type, std::shared_ptr<const std::string> payload,
                      uint64_t wire_bytes) override
    {
        m_world->sent.emplace_back(peer, type);
        if (m_world->down[peer] || m_world->down[m_self])
            return hilo::Status::Ok(); // dropped, as a process transport drops it
        const uint32_t from = m_self;
        const uint64_t seq = m_seq[peer]++;
        double delay = m_world->message_delay_s;
        if (type == kTrajectories && slow_batches > 0)
        {
            --slow_batches;
            delay += slow_batch_delay_s;
        }
        m_world->Schedule(delay,
                          [w = m_world, peer, from, type, payload, wire_bytes, seq]()
                          {
                              auto it = w->inbox.find(peer);
                              if (it == w->inbox.end() || w->down[peer] || w->down[from])
                                  return; // a link that went down loses what was on it
                              RoleMessage m;
                              m.type = type;
                              m.payload = *payload;
                              m.wire_bytes = wire_bytes;
                              m.sequence = seq;
                              it->second(from, m);
                          });
        return hilo::Status::Ok();
    }
    void Stop() override { stopped = true; }
    bool stopped{false};
    /// A straggler: the next `slow_batches` trajectory messages take this much longer.
    int slow_batches{0};
    double slow_batch_delay_s{0};

  private:
    FakeWorld* m_world;
    uint32_t m_self;
    std::map<uint32_t, uint64_t> m_seq;
    std::shared_ptr<bool> m_alive{std::make_shared<bool>(true)};
};

// A fake port that says it runs in real time (as a process does): it records what a role tells
// After about each phase, and waits only for the rest of the modelled time, as ProcessPort does.
class RealTimeFakePort : public FakePort
{
  public:
    using FakePort::FakePort;
    bool RealTime() const override { return true; }
    void After(double modelled_s, ComputePhase phase, double spent_s,
               std::function<void()> fn) override
    {
        phases.push_back({phase, modelled_s, spent_s});
        FakePort::After(std::max(0.0, modelled_s - spent_s), phase, spent_s, std::move(fn));
    }
    struct Phase
    {
        ComputePhase phase;
        double modelled_s;
        double spent_s;
    };
    std::vector<Phase> phases;
};

// A real-time port whose clock also runs with the wall clock, as a process's does: time passes
// while a role computes. Records its clock when the role hands over each phase.
class WallClockPort : public RealTimeFakePort
{
  public:
    using RealTimeFakePort::RealTimeFakePort;
    double Now() const override
    {
        return RealTimeFakePort::Now() +
               std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    }
    void After(double modelled_s, ComputePhase phase, double spent_s,
               std::function<void()> fn) override
    {
        handed_over_at.push_back(Now());
        RealTimeFakePort::After(modelled_s, phase, spent_s, std::move(fn));
    }
    std::vector<double> handed_over_at; // Now() at each After, in order with phases

  private:
    std::chrono::steady_clock::time_point m_start{std::chrono::steady_clock::now()};
};

// The same small model under GRPO: there a batch that passes every check on arrival can still
// make the gradient non-finite (behaviour log-probs far below any the policy gives).
const char* kGrpoScenario = R"(
name: "roles-grpo"
seed: 3
workload {
  kind: "grpo"
  steps: 3
  model { vocab: 32 d_model: 32 layers: 1 heads: 2 context: 24 }
  lora { rank: 4 }
  prompts_per_worker: 2
  group_size: 2
  gen_tokens: 6
  eval_prompts: 8
  eval_every: 3
}
optimizer { kind: "adamw" lr: 0.01 }
learner { gpu: "H100-SXM" }
workers { count: 2 gpu: "A10G" }
network { topology: "star" worker_link { bandwidth: "1Gbps" delay: "1ms" } }
arms { name: "hilo" strategy: "hilo" compressor: "spar" budget: "20%" }
)";

std::shared_ptr<ArmContext>
Context(const char* text = kScenario)
{
    auto loaded = LoadScenarioText(text, "roles.textproto", {}, CurrentCatalog());
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    auto context = BuildArmContext(loaded->resolved, loaded->resolved.arms[0]);
    EXPECT_TRUE(context.ok()) << context.status().ToString();
    return std::move(*context);
}

struct Cluster
{
    FakeWorld world;
    std::shared_ptr<ArmContext> context{Context()};
    FakePort learner_port{&world, kLearnerPeerId};
    std::unique_ptr<LearnerRole> learner;
    std::vector<std::unique_ptr<FakePort>> worker_ports;
    std::vector<std::unique_ptr<WorkerRole>> workers;
    std::vector<PublishEvent> published;
    std::vector<ApplyEvent> applied;
    std::map<uint32_t, std::vector<uint64_t>> rounds; // rounds rolled out, by worker process
    struct Dropped
    {
        uint32_t worker;
        uint64_t round;
        DropReason reason;
        std::string why;
    };
    std::vector<Dropped> dropped;
    std::vector<std::string> notes;                     // the learner's checkpoint notes
    std::vector<std::pair<uint32_t, uint64_t>> repeats; // resync_repeated calls

    /// `tune` changes the arm's context before any role sees it.
    explicit Cluster(LearnerRoleOptions options = {},
                     const std::function<void(ArmContext&)>& tune = {})
    {
        if (tune)
            tune(*context);
        LearnerHooks hooks;
        hooks.published = [this](const PublishEvent& e) { published.push_back(e); };
        hooks.member_dropped = [this](uint32_t w, uint64_t round, DropReason reason,
                                      const std::string& why) {
            dropped.push_back({w, round, reason, why});
        };
        hooks.checkpoint_note = [this](const std::string& line) { notes.push_back(line); };
        hooks.resync_repeated = [this](uint32_t w, uint64_t n) { repeats.emplace_back(w, n); };
        learner = std::make_unique<LearnerRole>(context, &learner_port, std::vector<uint32_t>{0, 1},
                                                hilo::PublisherOptions{}, hooks, options);
        world.inbox[kLearnerPeerId] = [this](uint32_t from, const RoleMessage& m)
        { ASSERT_TRUE(learner->HandleMessage(from, m).ok()); };
        for (uint32_t w = 0; w < 2; ++w)
        {
            StartWorker(w);
        }
        learner->Start();
        learner->HandlePeerConnected(0); // the workers' first connections
        learner->HandlePeerConnected(1);
    }

    /// Starts worker `w`'s process (again: the old one is gone), recording its applies and rounds.
    void StartWorker(uint32_t w)
    {
        WorkerHooks hooks;
        hooks.applied = [this](const ApplyEvent& e) { applied.push_back(e); };
        rounds[w].clear();
        hooks.rollout_done = [this](const RolloutEvent& e) { rounds[e.worker].push_back(e.round); };
        StartWorkerOn(w, std::make_unique<FakePort>(&world, w), hooks);
    }

    /// Starts worker `w`'s process on `port` with `hooks` (the old process, if any, is gone).
    WorkerRole* StartWorkerOn(uint32_t w, std::unique_ptr<FakePort> port, WorkerHooks hooks)
    {
        if (w < worker_ports.size())
        {
            worker_ports[w]->Kill();
            worker_ports[w] = std::move(port);
        }
        else
        {
            worker_ports.push_back(std::move(port));
        }
        WorkerRoleOptions options;
        options.announce_done = true;
        auto role = std::make_unique<WorkerRole>(context, worker_ports[w].get(), w, kLearnerPeerId,
                                                 options, std::move(hooks));
        WorkerRole* raw = role.get();
        world.inbox[w] = [raw](uint32_t from, const RoleMessage& m)
        { ASSERT_TRUE(raw->HandleMessage(from, m).ok()); };
        if (w < workers.size())
            workers[w] = std::move(role);
        else
            workers.push_back(std::move(role));
        raw->Start();
        return raw;
    }
};

TEST(Roles, LearnerTrainsOnlyOnceEveryWorkerSentItsRound)
{
    Cluster c;
    // Both workers started round 1 at time 0; nothing trains before both batches arrive.
    c.world.Run(/*until=*/0.0);
    EXPECT_TRUE(c.published.empty());
    c.world.Run();
    ASSERT_EQ(c.published.size(), 5u);
    for (uint64_t v = 1; v <= 5; ++v)
        EXPECT_EQ(c.published[v - 1].version, v);
    // Every worker applied every version, in order, and announced the last one with the
    // learner's hash.
    for (uint32_t w = 0; w < 2; ++w)
    {
        EXPECT_EQ(c.workers[w]->replica().version(), 5u);
        EXPECT_EQ(c.workers[w]->replica().state().adapter.Hash(),
                  c.learner->publisher().replica_view().adapter.Hash());
    }
    ASSERT_EQ(c.learner->done_workers().size(), 2u);
    EXPECT_TRUE(c.learner->done_workers().at(0));
    EXPECT_TRUE(c.learner->done_workers().at(1));
    EXPECT_FALSE(c.learner_port.stopped);
}

TEST(Roles, RestartedWorkerIsWelcomedCatchesUpAndResumesTheRoundItOwes)
{
    Cluster c;
    // Run until the learner published version 2, then "kill" worker 1: it loses everything.
    while (c.published.size() < 2)
        c.world.Run(c.world.now + 0.001);
    c.world.down[1] = true;
    c.world.Run(c.world.now + 1.0); // the learner stalls: round 3 lacks worker 1's batch
    const uint64_t stalled_at = c.learner->publisher().version();
    EXPECT_LT(stalled_at, 5u);
    EXPECT_EQ(c.published.size(), stalled_at);

    // A new worker 1 process: fresh replica at version 0, round 1. It connects again.
    c.world.down[1] = false;
    c.StartWorker(1);
    c.learner->HandlePeerConnected(1); // the reconnection: a welcome
    c.world.Run();

    size_t welcomes = 0;
    for (const auto& [to, type] : c.world.sent)
        welcomes += type == kWelcome && to == 1 ? 1 : 0;
    EXPECT_EQ(welcomes, 1u);
    ASSERT_EQ(c.published.size(), 5u);
    EXPECT_EQ(c.workers[1]->replica().version(), 5u);
    EXPECT_EQ(c.workers[1]->replica().state().adapter.Hash(),
              c.learner->publisher().replica_view().adapter.Hash());
    // The catch-up delivered the versions the new process never received as updates.
    bool via_resync = false;
    for (const ApplyEvent& e : c.applied)
        via_resync = via_resync || (e.worker == 1 && e.via_resync);
    EXPECT_TRUE(via_resync);
    EXPECT_TRUE(c.learner->done_workers().at(1));
    // The welcome sent it to the round the learner waited for: besides the round it started
    // before the welcome arrived, it rolled out only the rounds still to train.
    EXPECT_LE(c.rounds[1].size(), 1 + (5 - stalled_at))
        << "rolled out again rounds it owed no more";
}

TEST(Roles, ABatchLostInAnOutageIsRolledOutAgainAfterTheWelcome)
{
    Cluster c;
    // Worker 1 has just sent its batch for round 3 when its link goes down: the batch is lost on
    // the way, but the worker keeps its state.
    while (c.rounds[1].size() < 3)
        c.world.Run(c.world.now + 1e-5);
    ASSERT_EQ(c.learner->publisher().version(), 2u);
    c.world.down[1] = true;
    c.world.Run(c.world.now + 1.0);
    const uint64_t stalled_at = c.learner->publisher().version();
    EXPECT_LT(stalled_at, 5u);
    c.world.down[1] = false;
    c.learner->HandlePeerConnected(1); // it reconnects
    c.world.Run();
    ASSERT_EQ(c.published.size(), 5u);
    EXPECT_EQ(c.workers[1]->replica().state().adapter.Hash(),
              c.learner->publisher().replica_view().adapter.Hash());
}

TEST(Roles, UnusableMessagesAreReturnedNotApplied)
{
    Cluster c;
    RoleMessage junk;
    junk.type = kTrajectories;
    junk.payload = "short";
    EXPECT_EQ(c.learner->HandleMessage(0, junk).code(), hilo::StatusCode::kCorruption);
    junk.type = 77;
    EXPECT_EQ(c.learner->HandleMessage(0, junk).code(), hilo::StatusCode::kCorruption);
    EXPECT_EQ(c.workers[0]->HandleMessage(kLearnerPeerId, junk).code(),
              hilo::StatusCode::kCorruption);
    junk.type = kWelcome;
    EXPECT_EQ(c.workers[0]->HandleMessage(kLearnerPeerId, junk).code(),
              hilo::StatusCode::kCorruption);
    EXPECT_TRUE(c.learner->failure().ok());
    EXPECT_TRUE(c.workers[0]->failure().ok());
    c.world.Run();
    EXPECT_EQ(c.published.size(), 5u); // the run went on
}

// A peer's message the learner cannot use costs that peer its connection and nothing else: the
// learner returns an error (the driver closes the connection), records nothing and trains on.
// Each case is checked on its own, then the run must end with every worker at the final hash.
TEST(Roles, HostileMessagesToTheLearnerAreRefusedAndTheRunGoesOn)
{
    Cluster c;
    while (c.published.size() < 2)
        c.world.Run(c.world.now + 0.001);
    const uint64_t version = c.learner->publisher().version();
    auto message = [](uint32_t type, const std::string& payload)
    {
        RoleMessage m;
        m.type = type;
        m.payload = payload;
        m.wire_bytes = payload.size();
        return m;
    };
    struct Case
    {
        const char* name;
        uint32_t peer;
        uint32_t type;
        std::string payload;
        const char* says;
    };
    const std::string batch = "not a batch, never decoded";
    const std::vector<Case> cases = {
        {"resync for a future version", 0, kResyncRequest, EncodeResyncRequest(version + 1, false),
         "ahead of the learner's version"},
        {"resync far in the future", 1, kResyncRequest, EncodeResyncRequest(~0ull, true),
         "ahead of the learner's version"},
        {"unknown type", 0, 99, "x", "message type 99"},
        {"round past the newest", 0, kTrajectories, EncodeTrajectories(version + 2, version, batch),
         "accepts rounds up to"},
        {"round past the last step", 1, kTrajectories, EncodeTrajectories(1000, version, batch),
         "accepts rounds up to"},
        {"trajectories from a relay id", RelayPeerId(0), kTrajectories,
         EncodeTrajectories(version + 1, version, batch), "not a worker of the arm"},
        {"trajectories from an unknown worker id", 7, kTrajectories,
         EncodeTrajectories(version + 1, version, batch), "not a worker of the arm"},
        {"done from the learner's own id", kLearnerPeerId, kDone, EncodeDone(5, 0),
         "not a worker of the arm"},
        {"resync from an unknown id", 2, kResyncRequest, EncodeResyncRequest(0, true),
         "not a worker of the arm"},
    };
    const size_t sent_before = c.world.sent.size();
    for (const Case& k : cases)
    {
        hilo::Status s = c.learner->HandleMessage(k.peer, message(k.type, k.payload));
        EXPECT_FALSE(s.ok()) << k.name;
        EXPECT_NE(s.message().find(k.says), std::string::npos) << k.name << ": " << s.message();
        EXPECT_TRUE(c.learner->failure().ok()) << k.name << ": " << c.learner->failure().ToString();
        EXPECT_FALSE(c.learner_port.stopped) << k.name;
    }
    EXPECT_EQ(c.world.sent.size(), sent_before) << "a refused message was answered";
    EXPECT_TRUE(c.learner->done_workers().empty());

    // A worker whose connection ended is no member: its batch and its done are refused too.
    c.world.down[1] = true;
    c.learner->HandlePeerClosed(1, /*error=*/true);
    EXPECT_FALSE(c.learner
                     ->HandleMessage(
                         1, message(kTrajectories, EncodeTrajectories(version + 1, version, batch)))
                     .ok());
    EXPECT_FALSE(c.learner->HandleMessage(1, message(kDone, EncodeDone(5, 0))).ok());
    EXPECT_TRUE(c.learner->done_workers().empty());
    c.world.down[1] = false;
    c.learner->HandlePeerConnected(1);

    c.world.Run();
    ASSERT_EQ(c.published.size(), 5u);
    ASSERT_EQ(c.learner->done_workers().size(), 2u);
    for (uint32_t w = 0; w < 2; ++w)
    {
        EXPECT_TRUE(c.learner->done_workers().at(w));
        EXPECT_EQ(c.workers[w]->replica().state().adapter.Hash(),
                  c.learner->publisher().replica_view().adapter.Hash());
    }
    EXPECT_TRUE(c.learner->failure().ok());
}

// A flood of resync requests costs the learner one catch-up per connection and version (each
// would encode a snapshot): repeats are dropped unanswered, the escalation to a snapshot is served
// once, a new version or a new connection serves again, and the run ends with every worker at the
// final hash.
TEST(Roles, RepeatedResyncRequestsAreServedOncePerConnectionAndVersion)
{
    Cluster c;
    while (c.published.size() < 2)
        c.world.Run(c.world.now + 0.001);
    const uint64_t version = c.learner->publisher().version();
    auto request = [&](uint64_t from, bool snapshot)
    {
        RoleMessage m;
        m.type = kResyncRequest;
        m.payload = EncodeResyncRequest(from, snapshot);
        m.wire_bytes = m.payload.size();
        return c.learner->HandleMessage(0, m);
    };
    auto catchups = [&]
    {
        size_t n = 0;
        for (const auto& [to, type] : c.world.sent)
            n += to == 0 && type == kCatchUp;
        return n;
    };
    const size_t before = catchups();
    for (int i = 0; i < 2000; ++i)
        ASSERT_TRUE(request(0, false).ok());
    EXPECT_EQ(catchups(), before + 1) << "2,000 requests, one catch-up";
    EXPECT_EQ(c.learner->resyncs_repeated(), 1999u);
    // Said at the 1st, 10th, 100th and 1,000th repeat: the flood shows, the log stays short.
    const std::vector<std::pair<uint32_t, uint64_t>> said{{0, 1}, {0, 10}, {0, 100}, {0, 1000}};
    EXPECT_EQ(c.repeats, said);
    ASSERT_TRUE(request(0, true).ok()); // the escalation to a snapshot
    ASSERT_TRUE(request(0, true).ok());
    ASSERT_TRUE(request(0, false).ok());
    EXPECT_EQ(catchups(), before + 2);
    c.learner->HandlePeerClosed(0, /*error=*/false); // a new connection asks again
    c.learner->HandlePeerConnected(0);
    ASSERT_TRUE(request(version, false).ok());
    EXPECT_EQ(catchups(), before + 3);
    EXPECT_TRUE(c.learner->failure().ok());

    c.world.Run();
    ASSERT_EQ(c.published.size(), 5u);
    for (uint32_t w = 0; w < 2; ++w)
        EXPECT_EQ(c.workers[w]->replica().state().adapter.Hash(),
                  c.learner->publisher().replica_view().adapter.Hash());
}

// A worker takes updates from the learner or a relay and nothing else from anyone but the learner.
TEST(Roles, AWorkerRefusesMessagesFromPeersOtherThanItsLearner)
{
    Cluster c;
    RoleMessage welcome;
    const std::string bytes = EncodeWelcome(1, 0);
    welcome.type = kWelcome;
    welcome.payload = bytes;
    EXPECT_EQ(c.workers[0]->HandleMessage(RelayPeerId(0), welcome).code(),
              hilo::StatusCode::kInvalidArgument);
    EXPECT_EQ(c.workers[0]->HandleMessage(1, welcome).code(), hilo::StatusCode::kInvalidArgument);
    EXPECT_TRUE(c.workers[0]->failure().ok());
    c.world.Run();
    EXPECT_EQ(c.published.size(), 5u);
}

// A worker whose connection ended after it announced the last version is not counted as done by
// the learner (the process may be gone); welcomed again, it announces again.
TEST(Roles, ADoneIsForgottenWithItsConnectionAndAnnouncedAgainAfterTheWelcome)
{
    Cluster c;
    c.world.Run();
    ASSERT_EQ(c.learner->done_workers().size(), 2u);
    c.learner->HandlePeerClosed(1, /*error=*/false);
    EXPECT_EQ(c.learner->done_workers().count(1), 0u);
    c.learner->HandlePeerConnected(1);
    c.world.Run();
    ASSERT_EQ(c.learner->done_workers().count(1), 1u);
    EXPECT_TRUE(c.learner->done_workers().at(1));
}

// A relay forwards updates from its learner only; a worker that connects again gets the latest.
TEST(Roles, ARelayForwardsOnlyTheLearnersUpdatesAndResendsTheLatestToAReturningWorker)
{
    FakeWorld world;
    FakePort port(&world, RelayPeerId(0));
    RelayRoleOptions options;
    options.learner_peer = kLearnerPeerId;
    RelayRole relay(&port, {0, 1}, RelayHooks{}, RelayForwarding::kStoreAndForward, options);
    RoleMessage update;
    update.type = kUpdate;
    update.payload = "an update's bytes";
    update.wire_bytes = update.payload.size();
    EXPECT_EQ(relay.HandleMessage(1, update).code(), hilo::StatusCode::kInvalidArgument);
    EXPECT_TRUE(world.sent.empty()) << "a worker's update was forwarded";
    relay.HandlePeerConnected(0);
    relay.HandlePeerConnected(1);
    ASSERT_TRUE(relay.HandleMessage(kLearnerPeerId, update).ok());
    ASSERT_EQ(world.sent.size(), 2u);
    relay.HandlePeerClosed(1, /*error=*/true);
    relay.HandlePeerConnected(1);
    ASSERT_EQ(world.sent.size(), 3u);
    EXPECT_EQ(world.sent.back(), std::make_pair(1u, static_cast<uint32_t>(kUpdate)));
}

// A framed update of `version` (nothing else in it): what a relay reads the version from.
std::string
UpdateFrame(uint64_t version)
{
    hilo::wire::Update u;
    u.set_format_version(hilo::kFormatVersion);
    u.set_version(version);
    u.set_base_version(version - 1);
    auto frame = hilo::EncodeUpdateFrame(u);
    EXPECT_TRUE(frame.ok()) << frame.status().ToString();
    return *frame;
}

// A relay that knows the run's last version reads each update's: it holds the last version only
// once that update went through (before, a learner that goes away is only away, and is waited
// for even when none of the relay's workers is connected). An update that does not parse is
// forwarded (the workers refuse it) and leaves the version as it was.
TEST(Roles, ARelayKnowsWhetherItHoldsTheLastVersion)
{
    FakeWorld world;
    FakePort port(&world, RelayPeerId(0));
    RelayRoleOptions options;
    options.learner_peer = kLearnerPeerId;
    options.last_version = 3;
    RelayRole relay(&port, {0, 1}, RelayHooks{}, RelayForwarding::kStoreAndForward, options);
    RoleMessage update;
    update.type = kUpdate;
    std::map<uint64_t, std::string> frames{
        {1, UpdateFrame(1)}, {2, UpdateFrame(2)}, {3, UpdateFrame(3)}}; // the payload is a view
    for (uint64_t v = 1; v <= 2; ++v)
    {
        update.payload = frames[v];
        ASSERT_TRUE(relay.HandleMessage(kLearnerPeerId, update).ok());
        EXPECT_EQ(relay.latest_version(), v);
        EXPECT_FALSE(relay.HoldsLastVersion());
    }
    update.payload = "not a frame";
    ASSERT_TRUE(relay.HandleMessage(kLearnerPeerId, update).ok());
    EXPECT_EQ(relay.latest_version(), 2u);
    EXPECT_FALSE(relay.HoldsLastVersion());
    update.payload = frames[3];
    ASSERT_TRUE(relay.HandleMessage(kLearnerPeerId, update).ok());
    EXPECT_TRUE(relay.HoldsLastVersion());

    RelayRole unknowing(&port, {0, 1}, RelayHooks{}, RelayForwarding::kStoreAndForward,
                        RelayRoleOptions{});
    ASSERT_TRUE(unknowing.HandleMessage(kLearnerPeerId, update).ok());
    EXPECT_FALSE(unknowing.HoldsLastVersion()); // no last version given: versions are not read
}

// The learner's checkpoint holds the publish record of its version: a learner restored from it
// reports that publish exactly as the first learner reported it (so that a driver whose log lost
// it, the learner killed between writing the checkpoint and logging, records it then); a
// checkpoint whose record is damaged is refused.
TEST(Roles, ARestoredLearnerReportsThePublishItsCheckpointHolds)
{
    const std::string path =
        (std::filesystem::temp_directory_path() / "hilo-roles-learner.checkpoint").string();
    std::filesystem::remove(path);
    std::filesystem::remove(path + ".prev");
    LearnerRoleOptions options;
    options.checkpoint_path = path;
    Cluster c(options);
    for (double t = 0.001; c.published.size() < 2 && t < 100; t += 0.001)
        c.world.Run(t);
    ASSERT_GE(c.published.size(), 2u);
    ASSERT_LT(c.published.size(), 5u);             // mid-run
    const PublishEvent& last = c.published.back(); // the checkpoint is of this version
    c.learner_port.Kill();

    options.restore = true;
    FakePort port(&c.world, kLearnerPeerId);
    std::vector<PublishEvent> restored;
    LearnerHooks hooks;
    hooks.restored = [&](const PublishEvent& e) { restored.push_back(e); };
    LearnerRole learner(c.context, &port, {0, 1}, hilo::PublisherOptions{}, hooks, options);
    learner.Start();
    ASSERT_TRUE(learner.failure().ok()) << learner.failure().ToString();
    ASSERT_EQ(restored.size(), 1u);
    const PublishEvent& r = restored[0];
    EXPECT_EQ(r.version, last.version);
    EXPECT_EQ(learner.publisher().version(), last.version);
    EXPECT_EQ(r.published_s, last.published_s);
    EXPECT_EQ(r.grad_ready_s, last.grad_ready_s);
    EXPECT_EQ(r.loss, last.loss);
    EXPECT_EQ(r.state_hash, last.state_hash);
    EXPECT_EQ(r.wire_bytes, last.wire_bytes);
    EXPECT_EQ(r.copies, last.copies);
    EXPECT_EQ(r.copies, 2u);
    EXPECT_EQ(r.kept_per_matrix, last.kept_per_matrix);
    EXPECT_EQ(r.drift_rel_l2, last.drift_rel_l2);

    // Damaged in its record (its grad_ready_s): the latest generation is refused and the one
    // before it is restored, saying so; with both damaged the learner fails.
    auto damage = [](const std::string& file)
    {
        std::string bytes = test::ReadFile(file);
        bytes[4 + 4 + 2 * 4 + 8 + 3] ^= 0x10;
        std::ofstream f(file, std::ios::binary | std::ios::trunc);
        f << bytes;
    };
    damage(path);
    std::vector<std::string> notes;
    hooks.checkpoint_note = [&](const std::string& line) { notes.push_back(line); };
    FakePort port2(&c.world, kLearnerPeerId);
    LearnerRole previous(c.context, &port2, {0, 1}, hilo::PublisherOptions{}, hooks, options);
    previous.Start();
    ASSERT_TRUE(previous.failure().ok()) << previous.failure().ToString();
    EXPECT_EQ(previous.publisher().version(), last.version - 1);
    ASSERT_EQ(restored.size(), 2u);
    EXPECT_EQ(restored[1].version, last.version - 1);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("restored " + path + ".prev"), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find("CRC-32C"), std::string::npos) << notes[0];

    damage(path + ".prev");
    FakePort port3(&c.world, kLearnerPeerId);
    LearnerRole damaged(c.context, &port3, {0, 1}, hilo::PublisherOptions{}, hooks, options);
    damaged.Start();
    EXPECT_EQ(damaged.failure().code(), hilo::StatusCode::kCorruption)
        << damaged.failure().ToString();
    EXPECT_EQ(restored.size(), 2u);
    std::filesystem::remove(path);
    std::filesystem::remove(path + ".prev");
}

// A torn latest checkpoint (a crash or power loss mid-write on a file system that reorders, or a
// disk that lost its tail) restores from the previous generation.
TEST(Roles, ATornLatestCheckpointRestoresFromThePreviousOne)
{
    const std::string path =
        (std::filesystem::temp_directory_path() / "hilo-roles-torn.checkpoint").string();
    std::filesystem::remove(path);
    std::filesystem::remove(path + ".prev");
    LearnerRoleOptions options;
    options.checkpoint_path = path;
    Cluster c(options);
    c.world.Run();
    ASSERT_EQ(c.published.size(), 5u);
    const std::string latest = test::ReadFile(path);
    std::filesystem::resize_file(path, latest.size() / 2);
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

    options.restore = true;
    FakePort port(&c.world, kLearnerPeerId);
    std::vector<std::string> notes;
    LearnerHooks hooks;
    hooks.checkpoint_note = [&](const std::string& line) { notes.push_back(line); };
    std::vector<PublishEvent> restored;
    hooks.restored = [&](const PublishEvent& e) { restored.push_back(e); };
    LearnerRole learner(c.context, &port, {0, 1}, hilo::PublisherOptions{}, hooks, options);
    learner.Start();
    ASSERT_TRUE(learner.failure().ok()) << learner.failure().ToString();
    EXPECT_EQ(learner.publisher().version(), 4u);
    ASSERT_EQ(restored.size(), 1u);
    EXPECT_EQ(restored[0].state_hash, c.published[3].state_hash);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find(".prev at version 4"), std::string::npos) << notes[0];
    std::filesystem::remove(path);
    std::filesystem::remove(path + ".prev");
}

// A worker restoring a catch-up from the learner when that learner dies and a new one restores the
// previous checkpoint generation (the latest was torn): the catch-up finishes at a version the new
// learner does not hold. The worker must not keep it: it asks the new learner for its state from
// the new learner's version, and ends at the new learner's hash with nothing refused on the way.
TEST(Roles, ACatchUpFromALearnerAheadOfTheOneThatWelcomedTheWorkerSinceIsReplaced)
{
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("hilo-roles-catchup-" + std::to_string(::getpid()) + ".checkpoint"))
                                 .string();
    struct RemovedAtEnd // also when an assertion returns early
    {
        std::string path;
        ~RemovedAtEnd()
        {
            std::filesystem::remove(path);
            std::filesystem::remove(path + ".prev");
        }
    } removed{path};
    LearnerRoleOptions options;
    options.checkpoint_path = path;
    // Slow kernels: replaying a catch-up's updates takes long enough to change learners in.
    Cluster c(options, [](ArmContext& context) { context.compute.kernel_launch_s = 0.02; });
    while (c.published.size() < 3)
        c.world.Run(c.world.now + 0.001);
    c.world.down[1] = true; // worker 1's process dies
    c.world.Run(c.world.now + 1.0);
    const uint64_t old_version = c.learner->publisher().version();
    c.world.down[1] = false;
    std::vector<uint64_t> resync_from;
    WorkerHooks hooks;
    hooks.resync = [&](uint32_t, uint64_t from) { resync_from.push_back(from); };
    WorkerRole* w1 = c.StartWorkerOn(1, std::make_unique<FakePort>(&c.world, 1), hooks);
    c.learner->HandlePeerConnected(1); // welcome; the new process asks for a catch-up
    auto catch_ups_sent = [&]()
    {
        size_t n = 0;
        for (const auto& [to, type] : c.world.sent)
            n += to == 1 && type == kCatchUp;
        return n;
    };
    while (catch_ups_sent() == 0)
        c.world.Run(c.world.now + 0.001);
    c.world.Run(c.world.now + 0.01); // it arrived: worker 1's GPU restores it
    ASSERT_EQ(w1->replica().version(), 0u) << "the restore was not in progress";

    // The learner dies (what it and the workers had in flight to it is lost), its latest
    // checkpoint torn; a new learner restores the previous one and welcomes both workers.
    c.learner_port.Kill();
    c.world.inbox[kLearnerPeerId] = [](uint32_t, const RoleMessage&) {};
    c.world.Run(c.world.now + 0.01);
    std::filesystem::resize_file(path, test::ReadFile(path).size() / 2);
    options.restore = true;
    FakePort port(&c.world, kLearnerPeerId);
    LearnerRole learner(c.context, &port, {0, 1}, hilo::PublisherOptions{}, LearnerHooks{},
                        options);
    learner.Start();
    ASSERT_TRUE(learner.failure().ok()) << learner.failure().ToString();
    const uint64_t restored = learner.publisher().version();
    ASSERT_LT(restored, old_version);
    c.world.inbox[kLearnerPeerId] = [&](uint32_t from, const RoleMessage& m)
    { ASSERT_TRUE(learner.HandleMessage(from, m).ok()) << "refused a message from " << from; };
    const size_t asked_before = resync_from.size();
    learner.HandlePeerConnected(0);
    learner.HandlePeerConnected(1);
    c.world.Run();

    // The old learner's catch-up took worker 1 past the new learner; it then asked for the new
    // learner's state from the new learner's version.
    EXPECT_NE(std::find(resync_from.begin() + asked_before, resync_from.end(), restored),
              resync_from.end())
        << "worker 1 never asked the new learner for its state from version " << restored;
    EXPECT_EQ(learner.publisher().version(), 5u);
    for (uint32_t w = 0; w < 2; ++w)
    {
        EXPECT_EQ(c.workers[w]->replica().version(), 5u) << "worker " << w;
        EXPECT_EQ(c.workers[w]->replica().state().adapter.Hash(),
                  learner.publisher().replica_view().adapter.Hash())
            << "worker " << w;
    }
}

// A relay started again mid-run (its process was killed) has seen none of its workers connect, yet
// each of them is one coming back: the first time a worker connects, it is sent the latest update
// the relay holds (the learner's resend, which arrived while the worker was still away).
TEST(Roles, ARestartedRelaySendsTheLatestUpdateToEachWorkerThatConnects)
{
    FakeWorld world;
    FakePort port(&world, RelayPeerId(0));
    RelayRoleOptions options;
    options.learner_peer = kLearnerPeerId;
    options.restarted = true;
    RelayRole relay(&port, {0, 1}, RelayHooks{}, RelayForwarding::kStoreAndForward, options);
    relay.HandlePeerConnected(kLearnerPeerId);
    relay.HandlePeerConnected(0); // before there is an update: nothing to send
    EXPECT_TRUE(world.sent.empty());
    RoleMessage update;
    update.type = kUpdate;
    update.payload = "the learner's latest update";
    update.wire_bytes = update.payload.size();
    ASSERT_TRUE(relay.HandleMessage(kLearnerPeerId, update).ok());
    ASSERT_EQ(world.sent.size(), 2u); // to both (worker 1's copy is dropped: it is away)
    relay.HandlePeerConnected(1);
    ASSERT_EQ(world.sent.size(), 3u);
    EXPECT_EQ(world.sent.back(), std::make_pair(1u, static_cast<uint32_t>(kUpdate)));
}

// A process applies an update within its modelled apply time: the real decode + replay runs
// first and the port is told how long it took, so that the update is ready at max(modelled,
// real) and only real time past the modelled time counts as overrun (not the whole real time).
TEST(Roles, AWorkerInRealTimeRunsTheRealApplyInsideTheModelledTime)
{
    Cluster c;
    auto port = std::make_unique<RealTimeFakePort>(&c.world, 0u);
    RealTimeFakePort* rt = port.get();
    WorkerHooks hooks;
    std::vector<ApplyEvent> applied;
    hooks.applied = [&](const ApplyEvent& e) { applied.push_back(e); };
    WorkerRole* raw = c.StartWorkerOn(0, std::move(port), hooks);
    c.world.Run();
    ASSERT_EQ(c.published.size(), 5u);
    std::vector<RealTimeFakePort::Phase> applies;
    for (const auto& p : rt->phases)
    {
        if (p.phase == ComputePhase::kApply)
            applies.push_back(p);
    }
    ASSERT_EQ(applies.size(), 5u);
    ASSERT_EQ(applied.size(), 5u);
    for (size_t i = 0; i < applies.size(); ++i)
    {
        EXPECT_GT(applies[i].spent_s, 0.0) << "the real apply ran after the modelled time";
        EXPECT_EQ(applied[i].overrun_s, std::max(0.0, applies[i].spent_s - applies[i].modelled_s))
            << "version " << applied[i].version;
    }
    EXPECT_EQ(raw->replica().state().adapter.Hash(),
              c.learner->publisher().replica_view().adapter.Hash());
}

// A rollout starts when its sampling starts: started_s is read before the real sampling, so the
// clock at the hand-over, less the time the sampling took, is never before started_s (read after
// the sampling, started_s would be later than that by the whole sampling time).
TEST(Roles, ARolloutStartsBeforeItsRealSampling)
{
    Cluster c;
    auto port = std::make_unique<WallClockPort>(&c.world, 0u);
    WallClockPort* rt = port.get();
    WorkerHooks hooks;
    std::vector<RolloutEvent> rollouts;
    hooks.rollout_done = [&](const RolloutEvent& e) { rollouts.push_back(e); };
    c.StartWorkerOn(0, std::move(port), hooks);
    c.world.Run();
    ASSERT_EQ(c.published.size(), 5u);
    std::vector<std::pair<double, double>> handovers; // (clock at hand-over, real time spent)
    for (size_t i = 0; i < rt->phases.size(); ++i)
    {
        if (rt->phases[i].phase == ComputePhase::kRollout)
            handovers.push_back({rt->handed_over_at[i], rt->phases[i].spent_s});
    }
    ASSERT_EQ(rollouts.size(), handovers.size());
    ASSERT_GE(rollouts.size(), 5u);
    for (size_t i = 0; i < rollouts.size(); ++i)
    {
        EXPECT_GT(handovers[i].second, 0.0) << "round " << rollouts[i].round;
        EXPECT_LE(rollouts[i].started_s, handovers[i].first - handovers[i].second)
            << "round " << rollouts[i].round << ": started_s was read after the sampling";
    }
}

RoleMessage
Message(uint32_t type, const std::string& payload)
{
    RoleMessage m;
    m.type = type;
    m.payload = payload;
    m.wire_bytes = payload.size();
    return m;
}

// A trajectory batch is checked where it arrives, against what the workload asked its sender for;
// one that fails costs that peer its connection (the error) and nothing else. Each kind of bad
// batch on its own, then the run must complete with every worker at the final hash.
TEST(Roles, ABatchThatIsNotTheOneTheWorkloadAskedForIsRefusedOnArrival)
{
    Cluster c;
    models::Workload& workload = *c.context->workload;
    const std::vector<float>& theta = c.context->initial.theta;
    auto good = workload.Rollout(theta, /*step=*/1, /*worker=*/0, nullptr);
    ASSERT_TRUE(good.ok());
    auto parsed = models::TrajectoryBatch::Parse(*good);
    ASSERT_TRUE(parsed.ok());
    auto altered = [&](const std::function<void(models::TrajectoryBatch&)>& change)
    {
        models::TrajectoryBatch b = *parsed;
        change(b);
        EXPECT_TRUE(b.Validate().ok()) << b.Validate().ToString();
        return b.Serialize();
    };
    std::string flipped = *good;
    flipped[flipped.size() / 2] ^= 0x01;
    struct Case
    {
        const char* name;
        std::string envelope;
        hilo::StatusCode code;
        const char* says;
    };
    const std::vector<Case> cases = {
        {"zeros (the batch that once ended the learner)",
         EncodeTrajectories(1, 0, std::string(good->size(), '\0')), hilo::StatusCode::kCorruption,
         "CRC mismatch"},
        {"one byte flipped", EncodeTrajectories(1, 0, flipped), hilo::StatusCode::kCorruption,
         "CRC mismatch"},
        {"empty batch", EncodeTrajectories(1, 0, ""), hilo::StatusCode::kCorruption, "truncated"},
        {"another worker's batch",
         EncodeTrajectories(1, 0, *workload.Rollout(theta, 1, /*worker=*/1, nullptr)),
         hilo::StatusCode::kInvalidArgument, "worker 1, the workload's is 0"},
        {"another round's batch",
         EncodeTrajectories(1, 0, *workload.Rollout(theta, /*step=*/2, 0, nullptr)),
         hilo::StatusCode::kInvalidArgument, "step 2, the workload's is 1"},
        {"another vocabulary",
         EncodeTrajectories(1, 0, altered([](models::TrajectoryBatch& b) { b.vocab = 64; })),
         hilo::StatusCode::kInvalidArgument, "vocab 64, the workload's is 32"},
        {"fewer sequences",
         EncodeTrajectories(1, 0,
                            altered(
                                [](models::TrajectoryBatch& b)
                                {
                                    b.sequences = 1;
                                    b.tokens.resize(b.prompt_len + b.gen_len);
                                    b.behaviour_logp.resize(b.gen_len);
                                    b.rewards.resize(1);
                                })),
         hilo::StatusCode::kInvalidArgument, "sequences 1, the workload's is 2"},
        {"longer generations",
         EncodeTrajectories(1, 0,
                            altered(
                                [](models::TrajectoryBatch& b)
                                {
                                    const uint32_t row = b.prompt_len + b.gen_len;
                                    std::vector<int32_t> tokens;
                                    for (uint32_t i = 0; i < b.sequences; ++i)
                                    {
                                        tokens.insert(tokens.end(), b.tokens.begin() + i * row,
                                                      b.tokens.begin() + (i + 1) * row);
                                        tokens.push_back(0);
                                    }
                                    b.tokens = tokens;
                                    b.gen_len += 1;
                                    b.behaviour_logp.assign(b.sequences * b.gen_len, -1.0f);
                                })),
         hilo::StatusCode::kInvalidArgument, "gen_len 7, the workload's is 6"},
        {"sampled at a version never published", EncodeTrajectories(1, 3, *good),
         hilo::StatusCode::kInvalidArgument, "has not published"},
    };
    for (const Case& k : cases)
    {
        hilo::Status s = c.learner->HandleMessage(0, Message(kTrajectories, k.envelope));
        EXPECT_EQ(s.code(), k.code) << k.name << ": " << s.ToString();
        EXPECT_NE(s.message().find(k.says), std::string::npos) << k.name << ": " << s.message();
        EXPECT_TRUE(c.learner->failure().ok()) << k.name;
    }
    // Nothing of them was kept: worker 0's own batch is still awaited, and the run completes.
    EXPECT_EQ(c.learner->MissingBatches(), (std::vector<uint32_t>{0, 1}));
    c.world.Run();
    ASSERT_EQ(c.published.size(), 5u);
    for (uint32_t w = 0; w < 2; ++w)
        EXPECT_EQ(c.workers[w]->replica().state().adapter.Hash(),
                  c.learner->publisher().replica_view().adapter.Hash());
    EXPECT_TRUE(c.dropped.empty());
    EXPECT_TRUE(c.learner->failure().ok());
}

// A batch can pass every check and still make the gradient non-finite (GRPO: behaviour log-probs
// of -3e38 make the importance ratio infinite). The learner drops that batch and retakes the
// round's step without it: the version it publishes is exactly the one trained on the other
// member's batch alone, and the learner goes on.
TEST(Roles, ABatchThatMakesTheGradientNonFiniteIsDroppedAndTheStepRetakenWithoutIt)
{
    auto context = Context(kGrpoScenario);
    const std::vector<float>& theta = context->initial.theta;
    auto honest = context->workload->Rollout(theta, 1, /*worker=*/1, nullptr);
    auto mine = context->workload->Rollout(theta, 1, /*worker=*/0, nullptr);
    ASSERT_TRUE(honest.ok() && mine.ok());
    auto b = models::TrajectoryBatch::Parse(*mine);
    ASSERT_TRUE(b.ok());
    b->behaviour_logp.assign(b->behaviour_logp.size(), -3e38f);
    for (size_t i = 0; i < b->rewards.size(); ++i)
        b->rewards[i] = i % 2 == 0 ? 1.0f : 0.0f;
    ASSERT_TRUE(b->Validate().ok());
    const std::string poisoned = b->Serialize();

    auto learn = [&](const std::vector<std::pair<uint32_t, std::string>>& batches,
                     std::vector<uint32_t> members, std::vector<PublishEvent>* published,
                     std::vector<std::pair<uint32_t, DropReason>>* dropped)
    {
        FakeWorld world;
        FakePort port(&world, kLearnerPeerId);
        LearnerHooks hooks;
        hooks.published = [&](const PublishEvent& e) { published->push_back(e); };
        hooks.member_dropped =
            [&](uint32_t w, uint64_t round, DropReason reason, const std::string&)
        {
            EXPECT_EQ(round, 1u);
            dropped->push_back({w, reason});
        };
        LearnerRoleOptions options;
        options.members = members;
        LearnerRole learner(context, &port, {0, 1}, hilo::PublisherOptions{}, hooks, options);
        learner.Start();
        for (uint32_t w : members)
            learner.HandlePeerConnected(w);
        for (const auto& [w, batch] : batches)
        {
            hilo::Status s =
                learner.HandleMessage(w, Message(kTrajectories, EncodeTrajectories(1, 0, batch)));
            EXPECT_TRUE(s.ok()) << "refused on arrival: " << s.ToString();
        }
        world.Run();
        EXPECT_TRUE(learner.failure().ok()) << learner.failure().ToString();
        EXPECT_FALSE(port.stopped);
    };
    std::vector<PublishEvent> published, alone;
    std::vector<std::pair<uint32_t, DropReason>> dropped, none;
    learn({{0, poisoned}, {1, *honest}}, {0, 1}, &published, &dropped);
    learn({{1, *honest}}, {1}, &alone, &none);
    ASSERT_EQ(published.size(), 1u);
    ASSERT_EQ(alone.size(), 1u);
    EXPECT_EQ(dropped,
              (std::vector<std::pair<uint32_t, DropReason>>{{0, DropReason::kNonFiniteGradient}}));
    EXPECT_TRUE(none.empty());
    EXPECT_EQ(published[0].members_dropped, 1u);
    EXPECT_TRUE(std::isfinite(published[0].loss));
    EXPECT_EQ(published[0].state_hash, alone[0].state_hash) << "not the step without the batch";
    EXPECT_EQ(published[0].loss, alone[0].loss);
}

// mode.round_timeout: a member whose batch is late is dropped from that round (the round trains on
// the batches it has), and takes part again from the next version on. Without the deadline the
// same straggler holds the round until its batch arrives.
TEST(Roles, AStragglerMissesTheRoundDeadlineAndRejoinsAtTheNextVersion)
{
    auto run = [](double round_timeout_s, Cluster* c)
    {
        c->worker_ports[1]->slow_batches = 1; // worker 1's round-1 batch takes 5 s more
        c->worker_ports[1]->slow_batch_delay_s = 5.0;
        c->world.Run();
        ASSERT_EQ(c->published.size(), 5u) << "timeout " << round_timeout_s;
        for (uint32_t w = 0; w < 2; ++w)
            EXPECT_EQ(c->workers[w]->replica().state().adapter.Hash(),
                      c->learner->publisher().replica_view().adapter.Hash());
        EXPECT_TRUE(c->learner->failure().ok());
    };
    Cluster deadline({}, [](ArmContext& a) { a.round_timeout_s = 1.0; });
    ASSERT_NO_FATAL_FAILURE(run(1.0, &deadline));
    ASSERT_EQ(deadline.dropped.size(), 1u);
    EXPECT_EQ(deadline.dropped[0].worker, 1u);
    EXPECT_EQ(deadline.dropped[0].round, 1u);
    EXPECT_EQ(deadline.dropped[0].reason, DropReason::kDeadline);
    EXPECT_NE(deadline.dropped[0].why.find("round_timeout"), std::string::npos);
    EXPECT_EQ(deadline.published[0].members_dropped, 1u);
    EXPECT_GE(deadline.published[0].grad_ready_s, 1.0);
    EXPECT_LT(deadline.published[0].grad_ready_s, 2.0) << "version 1 waited for the straggler";
    for (size_t v = 1; v < 5; ++v)
        EXPECT_EQ(deadline.published[v].members_dropped, 0u) << "version " << v + 1;

    Cluster patient;
    ASSERT_NO_FATAL_FAILURE(run(0, &patient));
    EXPECT_TRUE(patient.dropped.empty());
    EXPECT_GE(patient.published[0].grad_ready_s, 5.0) << "the round did not wait";
    EXPECT_NE(patient.published[4].state_hash, deadline.published[4].state_hash);
}

// A member that connects and never sends is dropped at each round's deadline; the run completes
// on the other member's batches.
TEST(Roles, ASilentMemberCannotHoldTheRunHostage)
{
    Cluster c({}, [](ArmContext& a) { a.round_timeout_s = 0.5; });
    c.worker_ports[1]->slow_batches = 1000; // its batches never arrive within the run
    c.worker_ports[1]->slow_batch_delay_s = 1e6;
    c.world.Run(/*until=*/100);
    ASSERT_EQ(c.published.size(), 5u);
    for (const PublishEvent& p : c.published)
        EXPECT_EQ(p.members_dropped, 1u) << "version " << p.version;
    EXPECT_EQ(c.workers[0]->replica().state().adapter.Hash(),
              c.learner->publisher().replica_view().adapter.Hash());
    EXPECT_TRUE(c.learner->failure().ok());
}

// A learner restored from its checkpoint waits only for the members that come back within the
// deadline: worker 1 never does, and the run goes on with worker 0.
TEST(Roles, ARestoredLearnerWaitsOnlyForMembersThatComeBackInTime)
{
    const std::string path =
        (std::filesystem::temp_directory_path() / "hilo-roles-restored-deadline.checkpoint")
            .string();
    std::filesystem::remove(path);
    std::filesystem::remove(path + ".prev");
    LearnerRoleOptions options;
    options.checkpoint_path = path;
    auto tune = [](ArmContext& a) { a.round_timeout_s = 0.5; };
    Cluster c(options, tune);
    for (double t = 0.001; c.published.size() < 2 && t < 100; t += 0.001)
        c.world.Run(t);
    ASSERT_EQ(c.published.size(), 2u);
    c.learner_port.Kill();
    c.world.down[1] = true; // worker 1 is gone with the learner and never returns

    options.restore = true;
    FakePort port(&c.world, kLearnerPeerId);
    std::vector<PublishEvent> published;
    std::vector<uint32_t> dropped;
    LearnerHooks hooks;
    hooks.published = [&](const PublishEvent& e) { published.push_back(e); };
    hooks.member_dropped = [&](uint32_t w, uint64_t, DropReason, const std::string&)
    { dropped.push_back(w); };
    LearnerRole learner(c.context, &port, {0, 1}, hilo::PublisherOptions{}, hooks, options);
    c.world.inbox[kLearnerPeerId] = [&](uint32_t from, const RoleMessage& m)
    { ASSERT_TRUE(learner.HandleMessage(from, m).ok()); };
    learner.Start();
    ASSERT_TRUE(learner.failure().ok()) << learner.failure().ToString();
    EXPECT_EQ(learner.members(), (std::set<uint32_t>{0, 1})); // as the checkpoint says
    learner.HandlePeerConnected(0);
    c.world.Run(c.world.now + 100);
    ASSERT_EQ(learner.publisher().version(), 5u);
    EXPECT_EQ(dropped, (std::vector<uint32_t>{1, 1, 1}));
    EXPECT_EQ(c.workers[0]->replica().state().adapter.Hash(),
              learner.publisher().replica_view().adapter.Hash());
    std::filesystem::remove(path);
    std::filesystem::remove(path + ".prev");
}

// A full disk does not stop the learner: a checkpoint write that fails is reported and training
// goes on; a restart would restore the last version written.
TEST(Roles, ALearnerWhoseCheckpointCannotBeWrittenTrainsOnAndSaysSo)
{
    const std::string path =
        (std::filesystem::temp_directory_path() / "hilo-roles-full-disk.checkpoint").string();
    LearnerRoleOptions options;
    options.checkpoint_path = path;
    int writes = 0;
    options.write_file = [&](const std::string& p, std::string_view bytes)
    {
        EXPECT_EQ(p, path);
        EXPECT_FALSE(bytes.empty());
        return ++writes <= 2
                   ? hilo::Status::Ok()
                   : hilo::Status::Internal("cannot write " + p + ".tmp: No space left on device");
    };
    Cluster c(options);
    c.world.Run();
    ASSERT_EQ(c.published.size(), 5u);
    EXPECT_TRUE(c.learner->failure().ok()) << c.learner->failure().ToString();
    EXPECT_FALSE(c.learner_port.stopped);
    EXPECT_EQ(writes, 5);
    ASSERT_EQ(c.notes.size(), 3u);
    EXPECT_NE(c.notes[0].find("checkpoint of version 3 not written"), std::string::npos)
        << c.notes[0];
    EXPECT_NE(c.notes[0].find("No space left on device"), std::string::npos) << c.notes[0];
    EXPECT_NE(c.notes[2].find("would restore version 2"), std::string::npos) << c.notes[2];
    for (uint32_t w = 0; w < 2; ++w)
        EXPECT_EQ(c.workers[w]->replica().state().adapter.Hash(),
                  c.learner->publisher().replica_view().adapter.Hash());
}

} // namespace
} // namespace hilosim
