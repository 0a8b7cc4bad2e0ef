// Properties every compressor must have, checked for every kind and dtype: round trips, payloads
// within the budget (headers included) across a sweep, typed errors for small budgets,
// bit-identical decode across instances and thread counts (on a layout that splits across
// threads), and kCorruption (never a crash) for damaged payloads.
#include "hilo/compress/compressor-factory.h"
#include "hilo/core/coding.h"
#include "hilo/core/parallel.h"
#include "tests/hilo/compress-test-util.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <random>

namespace hilo
{
namespace
{

using testing::BitIdentical;
using testing::LoraLayout;
using testing::MakeCompressor;
using testing::SpectralGradient;

struct Case
{
    const char* kind;
    const char* options;
};

const Case kCases[] = {
    {"dense", "dtype=fp32"},
    {"dense", "dtype=bf16"},
    {"dense", "dtype=fp16"},
    {"spar", "dtype=fp32"},
    {"spar", "dtype=bf16"},
    {"spar", "dtype=fp16"},
    {"spar", "dtype=int8"},
    {"spar", "allocation=uniform;dtype=bf16;min_rank=1"},
    {"sparq", "bits=4"},
    {"sparq", "bits=2;block=16"},
    {"sparq", "bits=3;block=8;min_rank=1"},
    {"sparq", "bits=8"},
    {"powersgd", "dtype=fp32"},
    {"powersgd", "dtype=bf16"},
    {"powersgd", "dtype=fp16"},
    {"powersgd", "dtype=int8"},
    {"powersgd", "dtype=bf16;error_feedback=true;max_rank=3"},
    {"topk", "dtype=fp32"},
    {"topk", "dtype=bf16"},
    {"topk", "dtype=fp16;scope=per_matrix"},
    {"randk", "dtype=fp32"},
    {"randk", "dtype=bf16;unbiased=true"},
    {"randk", "dtype=fp16"},
    {"quant", "levels=1;scheme=qsgd"},
    {"quant", "block=64;levels=7;norm=l2;scheme=qsgd"},
    {"quant", "levels=127;scheme=qsgd"},
    {"quant", "block=100;scheme=int8"},
};

std::string
CaseName(const ::testing::TestParamInfo<Case>& info)
{
    std::string s = std::string(info.param.kind) + "_" + info.param.options;
    for (char& c : s)
    {
        if (!std::isalnum(static_cast<unsigned char>(c)))
            c = '_';
    }
    return s;
}

class CompressorConformance : public ::testing::TestWithParam<Case>
{
  protected:
    void SetUp() override
    {
        layout = LoraLayout();
        x = SpectralGradient(layout, 7, /*noise=*/1e-3);
        c = MakeCompressor(GetParam().kind, layout, GetParam().options);
        ASSERT_NE(c, nullptr);
    }
    /// A budget sweep from the minimum payload up to the adapter's bytes.
    std::vector<int64_t> Budgets() const
    {
        std::vector<int64_t> out;
        const int64_t lo = c->MinPayloadBytes();
        const int64_t hi = std::max(lo, layout.adapter_bytes() * 2);
        for (int t = 0; t <= 12; ++t)
            out.push_back(lo + (hi - lo) * t * t / 144);
        out.push_back(lo + 1);
        return out;
    }

    AdapterLayout layout;
    std::vector<float> x;
    std::unique_ptr<Compressor> c;
};

TEST_P(CompressorConformance, ParamsAreCanonicalAndRebuildTheSameCompressor)
{
    StatusOr<CompressorOptions> opts = ParseCompressorOptions(c->Params());
    ASSERT_TRUE(opts.ok());
    std::unique_ptr<Compressor> again = MakeCompressor(GetParam().kind, layout, c->Params());
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(again->Params(), c->Params());
    EXPECT_EQ(again->Name(), c->Name());
    EXPECT_NE(c->Name().find("-v"), std::string::npos);
    CompressorOptions bad = *opts;
    bad["no_such_option"] = "1";
    EXPECT_EQ(NewCompressor(GetParam().kind, layout, bad).status().code(),
              StatusCode::kInvalidArgument);
}

TEST_P(CompressorConformance, RoundTripsWithinEveryBudget)
{
    std::vector<float> out;
    for (int64_t budget : Budgets())
    {
        StatusOr<Encoded> e = c->Encode(x, budget);
        ASSERT_TRUE(e.ok()) << "budget " << budget << ": " << e.status().ToString();
        EXPECT_LE(static_cast<int64_t>(e->payload.size()), budget);
        EXPECT_GE(static_cast<int64_t>(e->payload.size()), c->MinPayloadBytes());
        ASSERT_TRUE(c->Decode(e->payload, &out).ok());
        ASSERT_EQ(out.size(), x.size());
        for (float v : out)
            ASSERT_TRUE(std::isfinite(v));
        // A decoded approximation is never worse than sending nothing, by more than quantization
        // noise (unbiased randk and stochastic quant trade variance for bias, and powersgd's own
        // error feedback approximates x plus its residual, so skip those).
        const std::string opts = GetParam().options;
        if (opts.find("unbiased=true") == std::string::npos &&
            opts.find("error_feedback=true") == std::string::npos &&
            std::string(GetParam().kind) != "quant")
        {
            EXPECT_LT(testing::RelativeError(out, x), 1.01) << "budget " << budget;
        }
    }
}

TEST_P(CompressorConformance, GenerousBudgetIsAccurate)
{
    StatusOr<Encoded> e = c->Encode(x, layout.adapter_bytes() * 4);
    ASSERT_TRUE(e.ok());
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(e->payload, &out).ok());
    const std::string kind = GetParam().kind;
    const std::string opts = GetParam().options;
    double tol = 0.02; // bf16 / fp16 rounding, int8 and low levels are looser
    if (opts.find("int8") != std::string::npos || opts.find("levels=127") != std::string::npos)
        tol = 0.05;
    if (opts.find("levels=7") != std::string::npos)
        tol = 0.6;
    if (opts.find("levels=1") != std::string::npos)
        tol = 2.0;
    if (opts.find("max_rank=3") != std::string::npos)
        tol = 1.5;       // capped powersgd cannot cover everything
    if (kind == "randk") // a budget for every entry: k = numel, one entry per stratum
        tol = opts.find("fp32") != std::string::npos ? 1e-7 : 0.02;
    if (kind == "sparq") // every triplet, each refit on what the earlier ones' codes left over
        tol = opts.find("bits=8") != std::string::npos   ? 0.02
              : opts.find("bits=4") != std::string::npos ? 0.15
                                                         : 0.6;
    EXPECT_LT(testing::RelativeError(out, x), tol);
}

// randk at a budget for about a sixth of the entries: the decoded vector holds exactly k non-zero
// entries (k read from the payload), and each is the input's own value at that index, rounded
// through the wire dtype (times numel / k when unbiased). A decoder that scatters values to other
// indices than the encoder drew them from fails here.
TEST_P(CompressorConformance, RandKShipsEachDrawnEntryToItsOwnIndex)
{
    if (std::string(GetParam().kind) != "randk")
        GTEST_SKIP() << "randk only";
    StatusOr<Encoded> e = c->Encode(x, layout.adapter_bytes() / 6);
    ASSERT_TRUE(e.ok());
    ByteReader r(e->payload);
    uint8_t dtype = 0;
    uint8_t flags = 0;
    uint64_t seed = 0;
    uint64_t k = 0;
    ASSERT_TRUE(r.GetU8(&dtype) && r.GetU8(&flags) && r.GetU64(&seed) && r.GetVarint(&k));
    ASSERT_GT(k, 0u);
    ASSERT_LT(k, static_cast<uint64_t>(layout.numel()) / 4);
    // The input rounded through the wire dtype: what dense of that dtype decodes to.
    std::vector<float> rounded;
    auto dense = MakeCompressor(
        "dense", layout, "dtype=" + std::string(ValueDtypeName(static_cast<ValueDtype>(dtype))));
    ASSERT_TRUE(
        dense->Decode(dense->Encode(x, int64_t{1} << 30).value().payload, &rounded).ok());
    const float scale =
        flags & 1 ? static_cast<float>(static_cast<double>(layout.numel()) / k) : 1.0f;
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(e->payload, &out).ok());
    uint64_t nonzero = 0;
    for (size_t i = 0; i < out.size(); ++i)
    {
        ASSERT_NE(rounded[i], 0.0f);
        if (out[i] != 0.0f)
        {
            ++nonzero;
            ASSERT_EQ(out[i], rounded[i] * scale) << "entry " << i;
        }
    }
    EXPECT_EQ(nonzero, k);
}

TEST_P(CompressorConformance, BudgetBelowMinimumIsTyped)
{
    StatusOr<Encoded> e = c->Encode(x, c->MinPayloadBytes() - 1);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.status().code(), StatusCode::kBudgetTooSmall);
    EXPECT_NE(e.status().message().find(std::to_string(c->MinPayloadBytes())), std::string::npos);
    std::vector<float> wrong(x.size() + 1);
    EXPECT_EQ(c->Encode(wrong, 1 << 30).status().code(), StatusCode::kInvalidArgument);
}

TEST_P(CompressorConformance, NonFiniteInputIsRejectedNotEncoded)
{
    if (std::string(GetParam().kind) == "dense" || std::string(GetParam().kind) == "randk")
        GTEST_SKIP() << "dense ships what it is given; randk reads only the entries it draws";
    std::vector<float> bad = x;
    bad[3] = std::nanf("");
    StatusOr<Encoded> e = c->Encode(bad, layout.adapter_bytes());
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
}

TEST_P(CompressorConformance, DecodeIsBitIdenticalAcrossInstancesAndThreads)
{
    // A layout large enough that every decode loop splits (64 x 2048 and 2048 x 64 factors, 1.2M
    // values, above every grain): with two threads the decode must really run on two.
    const AdapterLayout big = LoraLayout(/*layers=*/1, /*r=*/64, /*d=*/2048, /*f=*/8192);
    const std::vector<float> xb = SpectralGradient(big, 8, /*noise=*/1e-3);
    std::unique_ptr<Compressor> enc = MakeCompressor(GetParam().kind, big, GetParam().options);
    std::unique_ptr<Compressor> other = MakeCompressor(GetParam().kind, big, GetParam().options);
    const int64_t budget = std::max(enc->MinPayloadBytes(), big.adapter_bytes() / 10);
    StatusOr<Encoded> e = enc->Encode(xb, budget);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    const int threads = at::get_num_threads();
    std::vector<float> one, two, three;
    at::set_num_threads(1);
    ASSERT_TRUE(enc->Decode(e->payload, &one).ok());
    at::set_num_threads(2);
    int used = 0;
    {
        ParallelTally tally;
        ASSERT_TRUE(other->Decode(e->payload, &two).ok());
        used = tally.threads();
    }
    ASSERT_TRUE(enc->Decode(e->payload, &three).ok());
    at::set_num_threads(threads);
    EXPECT_EQ(used, 2) << "the 2-thread decode ran on " << used << " thread(s)";
    EXPECT_TRUE(BitIdentical(one, two));
    EXPECT_TRUE(BitIdentical(one, three));
}

TEST_P(CompressorConformance, TruncatedAndExtendedPayloadsAreCorruption)
{
    const int64_t budget = std::max(c->MinPayloadBytes(), layout.adapter_bytes() / 20);
    StatusOr<Encoded> e = c->Encode(x, budget);
    ASSERT_TRUE(e.ok());
    const std::string& p = e->payload;
    std::vector<float> out;
    std::vector<size_t> cuts = {0, 1, 2, 3, 5, 9, 11, p.size() / 3, p.size() / 2, p.size() - 1};
    for (size_t cut : cuts)
    {
        if (cut >= p.size())
            continue;
        Status s = c->Decode(std::string_view(p).substr(0, cut), &out);
        EXPECT_EQ(s.code(), StatusCode::kCorruption) << "cut at " << cut << ": " << s.ToString();
    }
    Status s = c->Decode(p + std::string("\x01", 1), &out);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
    s = c->Decode(p + std::string(1000, '\0'), &out);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
}

TEST_P(CompressorConformance, RandomDamageNeverCrashes)
{
    const int64_t budget = std::max(c->MinPayloadBytes(), layout.adapter_bytes() / 20);
    StatusOr<Encoded> e = c->Encode(x, budget);
    ASSERT_TRUE(e.ok());
    std::mt19937_64 gen(11);
    std::vector<float> out;
    int rejected = 0;
    for (int trial = 0; trial < 300; ++trial)
    {
        std::string p = e->payload;
        const int flips = 1 + static_cast<int>(gen() % 4);
        for (int f = 0; f < flips; ++f)
        {
            // Bias damage towards the header, where the lengths and counts live.
            const size_t at =
                (trial % 2 == 0) ? gen() % std::min<size_t>(p.size(), 48) : gen() % p.size();
            p[at] = static_cast<char>(gen() & 0xff);
        }
        Status s = c->Decode(p, &out);
        if (!s.ok())
        {
            EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
            ++rejected;
        }
        else
        {
            EXPECT_EQ(out.size(), x.size());
        }
    }
    // Damage to header bytes must be noticed often; value bytes may decode to other values.
    EXPECT_GT(rejected, 0);
}

INSTANTIATE_TEST_SUITE_P(AllKinds, CompressorConformance, ::testing::ValuesIn(kCases), CaseName);

TEST(CompressorFactory, ListsEveryKindAndRejectsUnknownOnes)
{
    std::vector<std::string> kinds;
    for (const CompressorInfo& info : ListCompressors())
        kinds.push_back(info.kind);
    for (const char* k : {"dense", "spar", "sparq", "powersgd", "topk", "randk", "quant", "pulse"})
        EXPECT_NE(std::find(kinds.begin(), kinds.end(), k), kinds.end()) << k;
    StatusOr<std::unique_ptr<Compressor>> c = NewCompressor("sparr", LoraLayout(), {});
    EXPECT_EQ(c.status().code(), StatusCode::kNotSupported);
    EXPECT_NE(c.status().message().find("spar"), std::string::npos);
}

} // namespace
} // namespace hilo
