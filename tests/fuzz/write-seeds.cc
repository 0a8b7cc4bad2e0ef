// Writes the seed corpora of the fuzz targets: `write-fuzz-seeds OUTDIR SOURCE_DIR`.
// - fuzz-compressor-decode: every compressor configuration's payload for the input of the golden
//   payload tests (tests/hilo/compressor-golden-test.cc) and for a second gradient, at a large
//   and at the smallest budget;
// - fuzz-frame and fuzz-replica: update frames, snapshots and catch-up plans of a real Publisher
//   for every replica configuration (raw and with the fix-header bit);
// - fuzz-restore: every compressor's local state (fresh and after three encodes) and a checkpoint
//   of a Publisher of every replica configuration;
// - fuzz-learner-session: op sequences of a learner session (honest, a resync flood, a silent
//   member, mutated batches, messages before the role starts);
// - fuzz-peer-message: a trajectory batch of its workload, bare and in its envelope, and one of
//   every other role envelope;
// - fuzz-transport: tests/fuzz/transport-input.cc's (frames, hello exchanges, records);
// - fuzz-scenario: the quickstart scenario with `--set` overrides of the documented forms (the
//   scenario files themselves are copied by scripts/fuzz.sh), and fuzz-scenario.dict, a libFuzzer
//   dictionary of every field and enum name of the scenario schema.
// Deterministic: the same build writes the same files.
#include "tests/fuzz/fuzz-fixture.h"
#include "tests/fuzz/transport-input.h"

#include "hilo/compress/base-aware.h"
#include "hilo/sync/publisher.h"
#include "models/trajectory-batch.h"
#include "sim/roles/role-messages.h"
#include "sim/scenario/scenario.pb.h"

#include <google/protobuf/descriptor.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace
{

namespace fs = std::filesystem;
using hilo::fuzz::Fail;

void
Write(const fs::path& dir, const std::string& name, const std::string& bytes)
{
    fs::create_directories(dir);
    std::ofstream out(dir / name, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out)
    {
        Fail("cannot write " + (dir / name).string());
    }
}

// A fixed pseudo-gradient (splitmix64), scaled like the tests' LoRA gradients.
std::vector<float>
Gradient(int64_t numel, uint64_t seed)
{
    std::vector<float> g(static_cast<size_t>(numel));
    uint64_t state = seed;
    for (float& x : g)
    {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        x = 1e-2f * static_cast<float>(static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0);
    }
    return g;
}

std::string
Byte(size_t v)
{
    return std::string(1, static_cast<char>(static_cast<uint8_t>(v)));
}

void
CompressorSeeds(const fs::path& dir)
{
    // The input of the golden payload tests, then a generic gradient.
    const std::vector<std::vector<float>> inputs = {
        {0.5f, -3.0f, 0.25f, 1.0f, 0.0f, -0.125f, 2.0f, 0.75f, -1.5f, 0.0625f, 4.0f, -0.5f},
        Gradient(hilo::fuzz::FuzzLayout().numel(), 7)};
    int written = 0;
    for (size_t i = 0; i < hilo::fuzz::CompressorConfigs().size(); ++i)
    {
        for (size_t k = 0; k < inputs.size(); ++k)
        {
            std::unique_ptr<hilo::Compressor> c = hilo::fuzz::MakeCompressor(i);
            auto* base_aware = dynamic_cast<hilo::BaseAwareCompressor*>(c.get());
            const hilo::AdapterState base = hilo::fuzz::FuzzInitialState();
            for (int64_t budget : {int64_t{1} << 20, c->MinPayloadBytes()})
            {
                if (base_aware != nullptr)
                {
                    base_aware->SetBase(&base.theta); // pulse encodes against the replicas' bits
                }
                const std::vector<float> x =
                    static_cast<int64_t>(inputs[k].size()) == c->layout().numel()
                        ? inputs[k]
                        : Gradient(c->layout().numel(), 7 + k);
                hilo::StatusOr<hilo::Encoded> e = c->Encode(x, budget);
                if (!e.ok() && base_aware != nullptr &&
                    e.status().code() == hilo::StatusCode::kBudgetTooSmall)
                {
                    continue; // lossless pulse takes no small budget: its changes need more
                }
                if (!e.ok())
                {
                    Fail("seed encode of configuration " + std::to_string(i) + ": " +
                         e.status().ToString());
                }
                Write(dir, "seed-" + std::to_string(written++), Byte(i) + e->payload);
            }
        }
    }
}

void
ProtocolSeeds(const fs::path& frame_dir, const fs::path& replica_dir)
{
    const hilo::AdapterLayout layout = hilo::fuzz::FuzzLayout();
    const auto& configs = hilo::fuzz::ReplicaConfigs();
    int frames = 0, plans = 0;
    for (size_t j = 0; j < configs.size(); ++j)
    {
        const hilo::fuzz::ReplicaConfig& c = configs[j];
        auto created = hilo::Publisher::Create(
            c.spec, layout, c.optimizer, hilo::fuzz::FuzzInitialState(),
            hilo::PublisherOptions{/*ring_capacity=*/3, /*snapshot_interval=*/2});
        if (!created.ok())
        {
            Fail("seed publisher " + std::to_string(j) + ": " + created.status().ToString());
        }
        hilo::Publisher& p = **created;
        std::vector<std::string> updates;
        std::string snapshot_v2;
        for (uint64_t step = 1; step <= 5; ++step)
        {
            auto u = p.Step(Gradient(layout.numel(), 100 * j + step));
            if (!u.ok())
            {
                Fail("seed publisher " + std::to_string(j) + " step: " + u.status().ToString());
            }
            updates.push_back(u->frame);
            if (step == 2)
            {
                snapshot_v2 = p.LatestSnapshotFrame().value();
            }
        }
        const hilo::CatchUpPlan plan = p.CatchUpFrom(0).value();

        // fuzz-frame: [mode][frame]; mode 1 fixes the header, 0 keeps it.
        for (const std::string* f : {&updates[0], &updates[2], &snapshot_v2})
        {
            for (uint8_t mode : {uint8_t{0}, uint8_t{1}})
            {
                Write(frame_dir, "seed-" + std::to_string(frames++), Byte(mode) + *f);
            }
        }

        // fuzz-replica: [config][op][chunks].
        const std::string cfg = Byte(j);
        const std::string apply = hilo::fuzz::JoinChunks({updates[0], updates[1], updates[2]});
        Write(replica_dir, "seed-" + std::to_string(plans++), cfg + Byte(0) + apply);
        Write(replica_dir, "seed-" + std::to_string(plans++),
              cfg + Byte(hilo::fuzz::kFixFrames) + apply);
        Write(replica_dir, "seed-" + std::to_string(plans++),
              cfg + Byte(1) + hilo::fuzz::JoinChunks({snapshot_v2, updates[2], updates[3]}));
        std::vector<std::string> catch_up = {plan.snapshot_frame};
        catch_up.insert(catch_up.end(), plan.update_frames.begin(), plan.update_frames.end());
        Write(replica_dir, "seed-" + std::to_string(plans++),
              cfg + Byte(2) + hilo::fuzz::JoinChunks(catch_up));
    }
}

// fuzz-restore: each compressor's local state after a few encodes, and a checkpoint of a publisher
// of each replica configuration after a few steps (with the ring and snapshot options the target
// restores with).
void
RestoreSeeds(const fs::path& dir)
{
    const size_t compressors = hilo::fuzz::CompressorConfigs().size();
    const hilo::AdapterLayout layout = hilo::fuzz::FuzzLayout();
    int n = 0;
    for (size_t i = 0; i < compressors; ++i)
    {
        std::unique_ptr<hilo::Compressor> c = hilo::fuzz::MakeCompressor(i);
        auto* base_aware = dynamic_cast<hilo::BaseAwareCompressor*>(c.get());
        const hilo::AdapterState base = hilo::fuzz::FuzzInitialState();
        Write(dir, "seed-" + std::to_string(n++), Byte(i) + c->SaveLocalState());
        for (uint64_t step = 1; step <= 3; ++step)
        {
            if (base_aware != nullptr)
            {
                base_aware->SetBase(&base.theta);
            }
            // The wide configurations' budget changes, so that warm bases widen and narrow.
            const bool narrow = hilo::fuzz::CompressorConfigs()[i].wide && step == 2;
            const int64_t budget = narrow ? c->layout().adapter_bytes() / 8 : int64_t{1} << 20;
            if (!c->Encode(Gradient(c->layout().numel(), 40 + step), budget).ok())
            {
                Fail("restore seed: encode of configuration " + std::to_string(i));
            }
        }
        Write(dir, "seed-" + std::to_string(n++), Byte(i) + c->SaveLocalState());
    }
    const auto& configs = hilo::fuzz::ReplicaConfigs();
    for (size_t j = 0; j < configs.size(); ++j)
    {
        auto p = hilo::Publisher::Create(
            configs[j].spec, layout, configs[j].optimizer, hilo::fuzz::FuzzInitialState(),
            hilo::PublisherOptions{hilo::fuzz::kRestoreRing, hilo::fuzz::kRestoreSnapshotInterval});
        if (!p.ok())
        {
            Fail("restore seed publisher " + std::to_string(j) + ": " + p.status().ToString());
        }
        for (uint64_t step = 1; step <= 4; ++step)
        {
            if (!(*p)->Step(Gradient(layout.numel(), 500 + 10 * j + step)).ok())
            {
                Fail("restore seed publisher " + std::to_string(j) + " step");
            }
        }
        Write(dir, "seed-" + std::to_string(n++), Byte(compressors + j) + (*p)->Checkpoint());
    }
}

void
ScenarioSeeds(const fs::path& dir, const fs::path& source)
{
    std::ifstream in(source / "scenarios" / "quickstart.textproto", std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in || text.str().empty())
    {
        Fail("cannot read scenarios/quickstart.textproto under " + source.string());
    }
    // One override of each form scenario-override.h documents.
    const std::vector<std::vector<std::string>> overrides = {
        {"arms[hilo-spar].budget=0.5%"},
        {"network.worker_link.bandwidth=1Gbps", "workload.steps=3"},
        {"arms[0].options.dtype=fp16", "arms[1].options[min_rank]=2"},
        {"network.learner_uplink=bandwidth: \"10Gbps\" delay: \"2ms\""},
        {"arms[2].name=extra", "arms[2].strategy=hilo", "arms[2].compressor=topk"},
        {"workers[0].count=3", "mode.max_staleness=1", "seed=7"},
    };
    int n = 0;
    for (const auto& set : overrides)
    {
        std::string seed = text.str();
        for (const std::string& o : set)
        {
            seed += '\0' + o;
        }
        Write(dir, "seed-overrides-" + std::to_string(n++), seed);
    }
}

void
CollectNames(const google::protobuf::Descriptor* d,
             std::set<const google::protobuf::Descriptor*>* seen, std::set<std::string>* names)
{
    if (!seen->insert(d).second)
    {
        return;
    }
    for (int i = 0; i < d->field_count(); ++i)
    {
        const google::protobuf::FieldDescriptor* f = d->field(i);
        names->insert(f->name());
        if (f->enum_type() != nullptr)
        {
            for (int k = 0; k < f->enum_type()->value_count(); ++k)
            {
                names->insert(f->enum_type()->value(k)->name());
            }
        }
        if (f->message_type() != nullptr)
        {
            CollectNames(f->message_type(), seen, names);
        }
    }
}

void
ScenarioDictionary(const fs::path& file)
{
    std::set<const google::protobuf::Descriptor*> seen;
    std::set<std::string> names;
    CollectNames(hilosim::Scenario::descriptor(), &seen, &names);
    // Tokens of the text format, the `--set` grammar and the unit strings the schema documents.
    for (const char* t : {"{",
                          "}",
                          ":",
                          "[",
                          "]",
                          "=",
                          "\"",
                          "key",
                          "value",
                          "Mbps",
                          "Gbps",
                          "Kbps",
                          "ms",
                          "us",
                          "s",
                          "%",
                          "B",
                          "KB",
                          "MB",
                          "GB",
                          "1e308",
                          "-1",
                          "nan",
                          "inf",
                          "18446744073709551615",
                          "9223372036854775807"})
    {
        names.insert(t);
    }
    std::string out;
    for (const std::string& n : names)
    {
        out += '"';
        for (char c : n)
        {
            if (c == '"' || c == '\\')
            {
                out += '\\';
            }
            out += c;
        }
        out += "\"\n";
    }
    Write(file.parent_path(), file.filename().string(), out);
}

// fuzz-peer-message: [mode][message] for every mode of tests/fuzz/fuzz-peer-message.cc: a batch
// of its workload (2 prompts x 2 completions, 4 + 6 tokens, vocabulary 64, round 3, worker 1)
// bare and in its envelope, plus one of each other envelope.
void
PeerMessageSeeds(const fs::path& dir)
{
    models::TrajectoryBatch b;
    b.kind = models::WorkloadKind::kDistill;
    b.step = 3;
    b.worker = 1;
    b.sequences = 4;
    b.prompt_len = 4;
    b.gen_len = 6;
    b.group_size = 2;
    b.vocab = 64;
    for (uint32_t i = 0; i < b.sequences * (b.prompt_len + b.gen_len); ++i)
        b.tokens.push_back(static_cast<int32_t>((i * 7) % 64));
    for (uint32_t i = 0; i < b.sequences * b.gen_len; ++i)
        b.behaviour_logp.push_back(-0.25f * static_cast<float>(i % 5));
    b.rewards.assign(b.sequences, 0.0f);
    const std::string batch = b.Serialize();
    hilo::CatchUpPlan plan;
    plan.snapshot_frame = "snapshot";
    plan.update_frames = {"u1", "update two"};
    Write(dir, "batch", Byte(0) + batch);
    Write(dir, "batch-fix-crc", Byte(8) + batch);
    Write(dir, "trajectories", Byte(1) + hilosim::EncodeTrajectories(3, 2, batch));
    Write(dir, "trajectories-fix-crc", Byte(9) + hilosim::EncodeTrajectories(3, 2, batch));
    Write(dir, "resync", Byte(2) + hilosim::EncodeResyncRequest(5, true));
    Write(dir, "catch-up", Byte(3) + hilosim::EncodeCatchUp(plan));
    Write(dir, "welcome", Byte(4) + hilosim::EncodeWelcome(4, 3));
    Write(dir, "done", Byte(5) + hilosim::EncodeDone(10, 0x1234567890abcdefull));
}

// fuzz-learner-session: op sequences of tests/fuzz/fuzz-learner-session.cc (ops: 0 connect,
// 1 close, 2 trajectories, 3 raw message, 4 resync, 5 done, 6 time passes, 7 run the timers;
// bit 3 is each op's flag). An honest run of three rounds with every worker done at the
// learner's hash; a resync flood; a member that goes silent past the round's deadline; mutated
// batches; messages before the role starts.
void
LearnerSessionSeeds(const fs::path& dir)
{
    auto op = [](uint8_t code, std::initializer_list<uint8_t> args)
    {
        std::string s(1, static_cast<char>(code));
        for (uint8_t a : args)
            s += static_cast<char>(a);
        return s;
    };
    auto round = [&](uint8_t r, uint8_t behaviour)
    {
        std::string s;
        for (uint8_t w = 0; w < 3; ++w)
            s += op(2, {w, r, behaviour, 0, 0});
        return s + op(7, {});
    };
    const std::string connect = op(0, {0}) + op(0, {1}) + op(0, {2});
    std::string honest = Byte(0) + connect + round(1, 0) + round(2, 1) + round(3, 2);
    for (uint8_t w = 0; w < 3; ++w)
        honest += op(5 | 8, {w, 3});
    Write(dir, "honest", honest);
    std::string flood = Byte(0) + connect;
    for (int i = 0; i < 40; ++i)
        flood += op(i % 2 ? 4 : 4 | 8, {1, 0});
    Write(dir, "resync-flood", flood + round(1, 0) + op(4 | 8, {1, 0}) + op(4, {1, 1}));
    Write(dir, "silent-member",
          Byte(0) + connect + op(2, {0, 1, 0, 0, 0}) + op(2, {2, 1, 0, 0, 0}) + op(6, {30}) +
              op(7, {}) + round(2, 1));
    Write(dir, "mutated-batches",
          Byte(0) + connect + op(2 | 8, {1, 1, 0, 17, 0}) + op(2 | 8, {2, 1, 0, 200, 1}) +
              round(1, 0) + op(1 | 8, {0}) + round(2, 1));
    Write(dir, "early",
          Byte(3) + op(2, {0, 1, 0, 0, 0}) + op(4, {1, 0}) + op(1, {1}) + connect + round(1, 0));
    Write(dir, "raw",
          Byte(0) + connect + op(3, {1, 6, 16, 0}) + std::string(16, '\x01') + op(3, {2, 9, 0, 0}) +
              round(1, 0));
}

} // namespace

int
main(int argc, char** argv)
{
    if (argc != 3)
    {
        std::fprintf(stderr, "usage: %s OUTDIR SOURCE_DIR\n", argv[0]);
        return 2;
    }
    const fs::path out = argv[1];
    CompressorSeeds(out / "fuzz-compressor-decode");
    ProtocolSeeds(out / "fuzz-frame", out / "fuzz-replica");
    RestoreSeeds(out / "fuzz-restore");
    ScenarioSeeds(out / "fuzz-scenario", argv[2]);
    PeerMessageSeeds(out / "fuzz-peer-message");
    hilo::fuzz::WriteTransportSeeds(out / "fuzz-transport");
    LearnerSessionSeeds(out / "fuzz-learner-session");
    ScenarioDictionary(out / "fuzz-scenario.dict");
    return 0;
}
