// libFuzzer target: a learner session. A LearnerRole of a small arm (three workers, three steps,
// the tiny real model), wired as hilo-node wires it (sim/drivers/process/learner-wiring.h, and the
// EventRouter that keeps early events and closes a peer whose message the role refuses), is fed
// a sequence of events from several peers decoded from the input: connections and closes, valid
// trajectory batches (made by the workload itself, so they pass the checks on arrival) sent for
// any round, possibly with one byte changed and the batch's CRC made to match, raw messages of
// any type, resync requests, done reports with the learner's hash or another, time passing, and
// the role's timers run to the end. No sockets: a fake port records what the learner sends.
//
// Input: [start byte][ops...]. The role starts after (start byte % 4) ops (what comes before is
// kept by the router, as before a node's epoch). Each op is [op byte][arguments]; op % 8 picks:
//   0 connect peer          [peer]
//   1 close peer            [peer] (bit 3 of the op byte: with an error)
//   2 trajectories          [peer][round][behaviour version][mutate u16] (bit 3: mutate byte
//                           (mutate % size) of the batch and fix its CRC)
//   3 raw message           [peer][type][chunk: u16 length + bytes]
//   4 resync request        [peer][version] (bit 3: with a snapshot)
//   5 done                  [peer][version] (bit 3: the learner's state hash, else a wrong one)
//   6 time passes           [tenths of a modelled second]
//   7 run every timer due, until none is left
// A message from a peer that is not connected connects it first (the transport delivers only
// from connected peers). Peers are workers 0-2 (the transport admits no other id).
//
// Invariants, after every op:
// - the learner never fails and never stops the node because of what a peer sent;
// - an honest batch (unchanged, for the round the learner waits for, from a member, sampled at a
//   version the learner has published) is never refused;
// - no message the learner sends is larger than a worker accepts for its type (peer-limits.h);
// - per connection and learner version, the learner sends a peer at most kMaxSendsPerVersion
//   messages (a welcome, the update, a catch-up and one escalation to a snapshot): what a peer
//   can make the learner queue grows with the versions published, never with what it sends.
// The transport's send-queue cap is modelled too: a peer whose unread bytes pass it is closed,
// as TcpTransport closes it.
#include "tests/fuzz/fuzz-fixture.h"

#include "sim/cli/catalog.h"
#include "sim/drivers/process/arm-frame-limit.h"
#include "sim/drivers/process/event-router.h"
#include "sim/drivers/process/learner-wiring.h"
#include "sim/drivers/process/peer-limits.h"
#include "sim/roles/learner-role.h"
#include "sim/roles/peer-ids.h"
#include "sim/roles/role-messages.h"
#include "sim/run/arm-context-builder.h"
#include "sim/scenario/scenario-loader.h"

#include "hilo/core/coding.h"
#include "hilo/core/crc32c.h"

#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace
{

using hilo::fuzz::Fail;
using namespace hilosim;

constexpr uint32_t kWorkers = 3;
constexpr int kMaxSendsPerVersion = 4;
constexpr int kMaxTimerRuns = 200;

const char* kScenario = R"(
name: "fuzz-learner-session"
seed: 5
workload {
  kind: "distill"
  steps: 3
  model { vocab: 32 d_model: 32 layers: 1 heads: 2 context: 24 }
  lora { rank: 4 }
  prompts_per_worker: 2
  gen_tokens: 6
  eval_prompts: 4
  eval_every: 3
}
optimizer { kind: "adamw" lr: 0.01 }
mode { round_timeout: "2s" }
learner { gpu: "H100-SXM" }
workers { count: 3 gpu: "A10G" }
network { topology: "star" worker_link { bandwidth: "1Gbps" delay: "1ms" } }
arms { name: "hilo" strategy: "hilo" compressor: "spar" budget: "20%" }
)";

// The arm, built once (the workload is deterministic in its inputs), with a valid batch of every
// worker for every round, and the limits a worker's transport applies to what the learner sends.
struct Arm
{
    std::shared_ptr<ArmContext> context;
    std::map<std::pair<uint64_t, uint32_t>, std::string> batches; // (round, worker) -> batch
    PeerLimits worker_limits;
    uint64_t max_queued_bytes{0};
};

const Arm&
TheArm()
{
    static const Arm arm = []()
    {
        Arm a;
        auto loaded =
            LoadScenarioText(kScenario, "fuzz-learner-session.textproto", {}, CurrentCatalog());
        if (!loaded.ok())
            Fail("the fuzzed scenario does not load: " + loaded.status().ToString());
        auto context = BuildArmContext(loaded->resolved, loaded->resolved.arms[0]);
        if (!context.ok())
            Fail("the fuzzed arm does not build: " + context.status().ToString());
        a.context = std::move(*context);
        for (uint64_t round = 1; round <= a.context->steps; ++round)
        {
            for (uint32_t w = 0; w < kWorkers; ++w)
            {
                auto batch =
                    a.context->workload->Rollout(a.context->initial.theta, round, w, nullptr);
                if (!batch.ok())
                    Fail("rollout: " + batch.status().ToString());
                a.batches[{round, w}] = std::move(*batch);
            }
        }
        auto limit = ArmFrameLimit(*a.context, hilo::PublisherOptions{});
        if (!limit.ok())
            Fail("frame limit: " + limit.status().ToString());
        a.worker_limits = PeerLimitsFor("worker", a.context->workload->config(), *limit);
        a.max_queued_bytes =
            PeerLimitsFor("learner", a.context->workload->config(), *limit).max_queued_bytes;
        return a;
    }();
    return arm;
}

// A RolePort whose clock moves when the input says so, and whose sends are recorded per peer.
class SessionPort : public RolePort
{
  public:
    double Now() const override { return m_now; }
    bool RealTime() const override { return false; }
    void After(double modelled_s, ComputePhase, double, std::function<void()> fn) override
    {
        m_timers.emplace(std::make_pair(m_now + modelled_s, m_seq++), std::move(fn));
    }
    hilo::Status Send(uint32_t peer, uint32_t type, std::shared_ptr<const std::string> payload,
                      uint64_t) override
    {
        sent.push_back({peer, type, payload->size(), version()});
        return hilo::Status::Ok();
    }
    void Stop() override { stopped = true; }

    /// Runs the timers due by now + `advance_s` in time order (at most kMaxTimerRuns).
    void Advance(double advance_s)
    {
        const double until = m_now + advance_s;
        for (int i = 0; i < kMaxTimerRuns && !m_timers.empty(); ++i)
        {
            auto it = m_timers.begin();
            if (it->first.first > until)
                break;
            m_now = std::max(m_now, it->first.first);
            auto fn = std::move(it->second);
            m_timers.erase(it);
            fn();
        }
        m_now = std::max(m_now, until);
    }
    /// Runs every timer, however far ahead (at most kMaxTimerRuns).
    void Drain()
    {
        for (int i = 0; i < kMaxTimerRuns && !m_timers.empty(); ++i)
            Advance(m_timers.begin()->first.first - m_now);
    }

    struct Sent
    {
        uint32_t peer;
        uint32_t type;
        uint64_t bytes;
        uint64_t version; // the learner's when it sent it
    };
    std::function<uint64_t()> version; // the learner's version now
    std::vector<Sent> sent;            // since the last Take
    bool stopped{false};

  private:
    double m_now{0};
    uint64_t m_seq{0};
    std::map<std::pair<double, uint64_t>, std::function<void()>> m_timers;
};

// The input, read front to back; past its end every read is 0.
class Reader
{
  public:
    Reader(const uint8_t* data, size_t size)
      : m_data(data)
      , m_size(size)
    {
    }
    bool done() const { return m_pos >= m_size; }
    uint8_t U8() { return m_pos < m_size ? m_data[m_pos++] : 0; }
    uint16_t U16() { return static_cast<uint16_t>(U8() | (U8() << 8)); }
    std::string Chunk()
    {
        const size_t n = std::min<size_t>(U16(), m_size - std::min(m_pos, m_size));
        std::string out(reinterpret_cast<const char*>(m_data) + m_pos, n);
        m_pos += n;
        return out;
    }

  private:
    const uint8_t* m_data;
    size_t m_size;
    size_t m_pos{0};
};

std::string
MutateBatch(std::string batch, uint16_t at)
{
    if (batch.size() < 8)
        return batch;
    batch[at % (batch.size() - 4)] ^= static_cast<char>(0x5a);
    const uint32_t crc = hilo::Crc32c(batch.data(), batch.size() - 4);
    std::string tail;
    hilo::ByteWriter(&tail).PutU32(crc);
    std::memcpy(&batch[batch.size() - 4], tail.data(), 4);
    return batch;
}

// One session: the role, its wiring and router, and what each connection has been sent.
class Session
{
  public:
    Session()
      : m_arm(TheArm())
      , m_wiring(kWorkers, {}, {}, nullptr, Actions())
      , m_router([]() {}, [this](uint32_t peer, const std::string& why) { Disconnect(peer, why); })
    {
        std::vector<uint32_t> update_peers;
        for (uint32_t w = 0; w < kWorkers; ++w)
            update_peers.push_back(WorkerPeerId(w));
        m_role = std::make_unique<LearnerRole>(m_arm.context, &m_port, update_peers,
                                               hilo::PublisherOptions{}, m_wiring.Hooks(),
                                               m_wiring.RoleOptions("", false));
        m_wiring.SetRole(m_role.get());
        m_port.version = [this]() { return Version(); };
        m_router.SetHandlers(
            {[this]() { return m_role->started(); },
             {},
             [this](uint32_t peer, const RoleMessage& m) { return m_role->HandleMessage(peer, m); },
             [this](uint32_t peer) { m_role->HandlePeerConnected(peer); },
             [this](uint32_t peer, bool error) { m_role->HandlePeerClosed(peer, error); }});
    }

    void Start()
    {
        m_role->Start();
        if (m_role->started())
            m_router.RoleStarted();
        Check();
    }

    void Op(uint8_t op, Reader& in)
    {
        const bool flag = (op & 8u) != 0;
        switch (op % 8)
        {
            case 0:
                Connect(in.U8() % kWorkers);
                break;
            case 1:
                Close(in.U8() % kWorkers, flag);
                break;
            case 2:
            {
                const uint32_t peer = in.U8() % kWorkers;
                const uint64_t round = in.U8() % (m_arm.context->steps + 2);
                const uint64_t behaviour = in.U8() % (m_arm.context->steps + 2);
                const uint16_t at = in.U16();
                auto it = m_arm.batches.find({round, peer});
                std::string batch =
                    it != m_arm.batches.end() ? it->second : m_arm.batches.begin()->second;
                const bool honest = !flag && it != m_arm.batches.end() && m_role->started() &&
                                    round == Version() + 1 && behaviour <= Version() &&
                                    m_role->members().count(peer) != 0 && m_open.count(peer) != 0;
                if (flag)
                    batch = MutateBatch(std::move(batch), at);
                m_honestPeer = honest ? int64_t{peer} : -1;
                Deliver(peer, kTrajectories, EncodeTrajectories(round, behaviour, batch));
                m_honestPeer = -1;
                break;
            }
            case 3:
            {
                const uint32_t peer = in.U8() % kWorkers;
                const uint32_t type = in.U8() % 8;
                Deliver(peer, type, in.Chunk());
                break;
            }
            case 4:
            {
                const uint32_t peer = in.U8() % kWorkers;
                Deliver(peer, kResyncRequest, EncodeResyncRequest(in.U8() % 5, flag));
                break;
            }
            case 5:
            {
                const uint32_t peer = in.U8() % kWorkers;
                const uint64_t version = in.U8() % 5;
                const uint64_t hash = flag && m_role->started()
                                          ? m_role->publisher().replica_view().adapter.Hash()
                                          : 0x5eed;
                Deliver(peer, kDone, EncodeDone(version, hash));
                break;
            }
            case 6:
                m_port.Advance(0.1 * in.U8());
                break;
            case 7:
                m_port.Drain();
                break;
        }
        Check();
    }

  private:
    LearnerNodeActions Actions()
    {
        LearnerNodeActions a;
        a.progress = []() {};
        a.log = [](const std::string&) {};
        a.disconnect = [this](uint32_t peer, const std::string& why) { Disconnect(peer, why); };
        a.finish = [](int, const std::string&) {}; // the run's verdict, not a failure
        return a;
    }

    uint64_t Version() const { return m_role->started() ? m_role->publisher().version() : 0; }

    void Connect(uint32_t peer)
    {
        if (m_open.count(peer) != 0)
            return;
        m_open[peer] = {Version(), 0, 0};
        m_router.OnConnected(peer);
    }
    void Close(uint32_t peer, bool error)
    {
        if (m_open.erase(peer) == 0)
            return;
        m_wiring.PeerClosed(peer); // the node's on_closed, then the role
        m_router.OnClosed(peer, error);
    }
    // The transport closes the connection: its close reaches the node once the call returns.
    void Disconnect(uint32_t peer, const std::string& why)
    {
        if (m_honestPeer == int64_t{peer})
            Fail("an honest batch was refused: " + why);
        m_closing.insert(peer);
    }
    void Deliver(uint32_t peer, uint32_t type, const std::string& payload)
    {
        Connect(peer);
        RoleMessage m;
        m.type = type;
        m.payload = payload;
        m.wire_bytes = payload.size();
        m.sequence = m_open[peer].received++;
        m_router.OnMessage(peer, m);
    }

    void Check()
    {
        if (!m_role->failure().ok())
            Fail("the learner failed on peer input: " + m_role->failure().ToString());
        if (m_port.stopped)
            Fail("the learner stopped the node on peer input");
        if (m_router.early_bytes() > kMaxEarlyBytes)
            Fail("the router keeps more early bytes than kMaxEarlyBytes");
        for (const SessionPort::Sent& s : m_port.sent)
        {
            const auto limit = m_arm.worker_limits.payload_by_type.find(s.type);
            if (limit == m_arm.worker_limits.payload_by_type.end() || s.bytes > limit->second)
                Fail("the learner sent message type " + std::to_string(s.type) + " of " +
                     std::to_string(s.bytes) + " bytes, which a worker refuses");
            auto open = m_open.find(s.peer);
            if (open == m_open.end() || m_closing.count(s.peer) != 0)
                continue; // the transport drops it
            Connection& c = open->second;
            if (c.version != s.version)
            {
                c.version = s.version;
                c.sends_this_version = 0;
            }
            if (++c.sends_this_version > kMaxSendsPerVersion)
                Fail("the learner sent peer " + std::to_string(s.peer) + " more than " +
                     std::to_string(kMaxSendsPerVersion) + " messages at version " +
                     std::to_string(s.version) + " on one connection");
            c.queued_bytes += s.bytes;
            if (c.queued_bytes > m_arm.max_queued_bytes)
                m_closing.insert(s.peer); // past the transport's send-queue cap
        }
        m_port.sent.clear();
        // What the transport closed reaches the role now.
        while (!m_closing.empty())
        {
            const uint32_t peer = *m_closing.begin();
            m_closing.erase(m_closing.begin());
            Close(peer, /*error=*/true);
            if (!m_role->failure().ok())
                Fail("the learner failed when a peer was closed: " + m_role->failure().ToString());
        }
    }

    struct Connection
    {
        uint64_t version{0};       // the learner's version the count below is for
        int sends_this_version{0}; // messages sent on this connection at that version
        uint64_t received{0};      // messages received on this connection (sequence numbers)
        uint64_t queued_bytes{0};  // bytes sent on this connection (a peer that never reads)
    };

    const Arm& m_arm;
    SessionPort m_port;
    LearnerWiring m_wiring;
    EventRouter m_router;
    std::unique_ptr<LearnerRole> m_role;
    std::map<uint32_t, Connection> m_open; // connected peers
    std::set<uint32_t> m_closing;          // closed by the transport, not yet told
    int64_t m_honestPeer{-1};              // the sender of an honest batch being delivered
};

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size == 0 || size > 4096)
        return 0;
    Reader in(data, size);
    const int start_after = in.U8() % 4;
    Session session;
    int ops = 0;
    if (start_after == 0)
        session.Start();
    while (!in.done() && ops < 256)
    {
        session.Op(in.U8(), in);
        if (++ops == start_after)
            session.Start();
    }
    if (ops < start_after)
        session.Start();
    return 0;
}
