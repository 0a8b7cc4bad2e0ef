#include "tests/fuzz/fuzz-fixture.h"

#include "hilo/compress/compressor-factory.h"
#include "hilo/core/coding.h"
#include "hilo/core/crc32c.h"
#include "hilo/wire/framing.h"

#include <cstdio>
#include <cstdlib>

namespace hilo::fuzz
{

AdapterLayout
FuzzLayout()
{
    return AdapterLayout::Create({{"a", 2, 3}, {"b", 3, 2}}).value();
}

AdapterLayout
WideFuzzLayout()
{
    return AdapterLayout::Create({{"a", 16, 20}, {"b", 20, 16}}).value();
}

AdapterState
FuzzInitialState()
{
    AdapterState s;
    s.theta = {0.02f, -0.01f, 0.015f, 0.005f, -0.02f, 0.01f, 0, 0, 0, 0, 0, 0};
    return s;
}

const std::vector<CompressorConfig>&
CompressorConfigs()
{
    static const std::vector<CompressorConfig> kConfigs = {
        {"dense", "dtype=fp32"},
        {"dense", "dtype=bf16"},
        {"dense", "dtype=fp16"},
        {"spar", "dtype=fp32"},
        {"spar", "dtype=bf16"},
        {"spar", "dtype=fp16"},
        {"spar", "dtype=int8"},
        {"powersgd", "dtype=fp32"},
        {"powersgd", "dtype=int8"},
        {"topk", "dtype=fp32"},
        {"topk", "dtype=bf16;scope=per_matrix"},
        {"topk", "dtype=fp16"},
        {"randk", "dtype=bf16;seed=3"},
        {"randk", "dtype=fp32;unbiased=true"},
        {"quant", "block=4;scheme=int8"},
        {"quant", "block=4;levels=1;seed=1"},
        {"quant", "block=5;levels=7;norm=l2"},
        {"quant", "levels=127"},
        {"sparq", "bits=4"},
        {"sparq", "bits=2;block=8"},
        {"sparq", "bits=8;min_rank=1"},
        {"pulse", ""},
        {"powersgd", "dtype=bf16;error_feedback=true;max_rank=1"},
        {"spar", "dtype=fp32;sketch=4;warm=true", true},
    };
    return kConfigs;
}

std::unique_ptr<Compressor>
MakeCompressor(size_t i)
{
    const CompressorConfig& c = CompressorConfigs().at(i);
    StatusOr<CompressorOptions> options = ParseCompressorOptions(c.options);
    if (!options.ok())
    {
        Fail(std::string("fuzz table: options '") + c.options + "': " + options.status().message());
    }
    StatusOr<std::unique_ptr<Compressor>> made =
        NewCompressor(c.kind, c.wide ? WideFuzzLayout() : FuzzLayout(), *options);
    if (!made.ok())
    {
        Fail(std::string("fuzz table: ") + c.kind + " (" + c.options +
             "): " + made.status().message());
    }
    return std::move(*made);
}

namespace
{

ReplicaConfig
Hilo(const char* compressor, CompressorOptions options, Budget budget)
{
    ReplicaConfig c;
    c.spec.kind = SyncKind::kHilo;
    c.spec.compressor = compressor;
    c.spec.compressor_options = std::move(options);
    c.spec.budget = budget;
    return c;
}

std::vector<ReplicaConfig>
BuildReplicaConfigs()
{
    std::vector<ReplicaConfig> out;
    out.push_back(Hilo("dense", {{"dtype", "bf16"}}, Budget::Unlimited()));
    out.push_back(Hilo("spar", {{"dtype", "bf16"}}, Budget::Bytes(40)));
    out.push_back(Hilo("spar", {{"dtype", "int8"}}, Budget::Unlimited()));
    out.push_back(Hilo("powersgd", {{"dtype", "fp32"}}, Budget::Bytes(60)));
    out.push_back(Hilo("topk", {{"dtype", "fp16"}, {"scope", "per_matrix"}}, Budget::Bytes(24)));
    out.push_back(Hilo("randk", {{"dtype", "fp32"}}, Budget::Bytes(30)));
    out.push_back(Hilo("quant", {{"scheme", "int8"}, {"block", "4"}}, Budget::Unlimited()));

    ReplicaConfig full;
    full.spec.kind = SyncKind::kFull;
    full.spec.compressor = "dense";
    full.spec.compressor_options = {{"dtype", "fp32"}};
    out.push_back(full);

    ReplicaConfig delta;
    delta.spec.kind = SyncKind::kDelta;
    delta.spec.compressor = "topk";
    delta.spec.compressor_options = {{"dtype", "fp32"}};
    delta.spec.budget = Budget::Bytes(40);
    delta.spec.error_feedback = ErrorFeedbackOptions{/*enabled=*/true, /*decay=*/1.0f};
    out.push_back(delta);

    ReplicaConfig sgd = Hilo("dense", {{"dtype", "fp32"}}, Budget::Unlimited());
    sgd.optimizer.kind = OptimizerKind::kSgdMomentum;
    sgd.optimizer.lr.base_lr = 0.1f;
    out.push_back(sgd);

    // The newer payloads and the primal replica path.
    out.push_back(Hilo("sparq", {{"bits", "4"}}, Budget::Bytes(40)));
    ReplicaConfig primal = Hilo("sparq", {{"bits", "3"}, {"block", "8"}}, Budget::Bytes(48));
    primal.spec.kind = SyncKind::kPrimal;
    primal.spec.error_feedback = ErrorFeedbackOptions{/*enabled=*/true, /*decay=*/0.7f};
    out.push_back(primal);
    ReplicaConfig primal_topk = Hilo("topk", {{"dtype", "bf16"}}, Budget::Bytes(30));
    primal_topk.spec.kind = SyncKind::kPrimal;
    primal_topk.spec.error_feedback = ErrorFeedbackOptions{/*enabled=*/true, /*decay=*/1.0f};
    out.push_back(primal_topk);
    ReplicaConfig pulse = Hilo("pulse", {}, Budget::Unlimited());
    pulse.spec.kind = SyncKind::kDelta;
    out.push_back(pulse);
    ReplicaConfig primal_pulse = Hilo("pulse", {}, Budget::Unlimited());
    primal_pulse.spec.kind = SyncKind::kPrimal;
    out.push_back(primal_pulse);
    ReplicaConfig cosine = Hilo("powersgd", {{"dtype", "int8"}}, Budget::Bytes(60));
    cosine.spec.error_feedback = ErrorFeedbackOptions{/*enabled=*/true, /*decay=*/1.0f};
    cosine.optimizer.lr.kind = LrScheduleKind::kCosine;
    cosine.optimizer.lr.warmup_steps = 2;
    cosine.optimizer.lr.total_steps = 6;
    out.push_back(cosine);
    return out;
}

} // namespace

const std::vector<ReplicaConfig>&
ReplicaConfigs()
{
    static const std::vector<ReplicaConfig> kConfigs = BuildReplicaConfigs();
    return kConfigs;
}

std::string
FixFrameHeader(std::string_view frame)
{
    std::string out(frame);
    if (out.size() < kFrameHeaderBytes)
    {
        return out;
    }
    const std::string_view body = std::string_view(out).substr(kFrameHeaderBytes);
    std::string fields;
    ByteWriter w(&fields);
    w.PutU64(body.size());
    w.PutU32(Crc32c(body.data(), body.size()));
    out.replace(8, fields.size(), fields);
    return out;
}

std::vector<std::string>
SplitChunks(std::string_view data, size_t max_chunks)
{
    std::vector<std::string> out;
    while (data.size() >= 2 && out.size() < max_chunks)
    {
        const size_t n = static_cast<uint8_t>(data[0]) | (static_cast<uint8_t>(data[1]) << 8);
        data.remove_prefix(2);
        const size_t take = n < data.size() ? n : data.size();
        out.emplace_back(data.substr(0, take));
        data.remove_prefix(take);
    }
    return out;
}

std::string
JoinChunks(const std::vector<std::string>& chunks)
{
    std::string out;
    ByteWriter w(&out);
    for (const std::string& c : chunks)
    {
        if (c.size() > 0xffff)
        {
            Fail("seed chunk of " + std::to_string(c.size()) + " bytes does not fit a u16 length");
        }
        w.PutU16(static_cast<uint16_t>(c.size()));
        w.PutBytes(c.data(), c.size());
    }
    return out;
}

void
Fail(const std::string& what)
{
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what.c_str());
    std::fflush(stderr);
    std::abort();
}

} // namespace hilo::fuzz
