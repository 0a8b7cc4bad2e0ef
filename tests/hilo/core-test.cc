// Core building blocks: layouts, hashing, CRC-32C, value dtypes, byte coding, budgets, options.
#include "hilo/compress/budget.h"
#include "hilo/compress/compressor-options.h"
#include "hilo/core/adapter-layout.h"
#include "hilo/core/coding.h"
#include "hilo/core/crc32c.h"
#include "hilo/core/hash.h"
#include "hilo/core/lora-layout.h"
#include "hilo/core/value-dtype.h"

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace hilo
{
namespace
{

TEST(AdapterLayout, OffsetsAndValidation)
{
    auto layout = AdapterLayout::Create({{"a", 2, 3}, {"b", 4, 5}});
    ASSERT_TRUE(layout.ok());
    EXPECT_EQ(layout->offset(0), 0);
    EXPECT_EQ(layout->offset(1), 6);
    EXPECT_EQ(layout->numel(), 26);
    EXPECT_EQ(layout->adapter_bytes(), 52);

    auto dup = AdapterLayout::Create({{"a", 2, 3}, {"a", 4, 5}});
    EXPECT_EQ(dup.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(dup.status().message().find("duplicate"), std::string::npos);
    EXPECT_FALSE(AdapterLayout::Create({{"a", 0, 3}}).ok());
    EXPECT_FALSE(AdapterLayout::Create({{"", 1, 3}}).ok());
}

TEST(AdapterLayout, FingerprintDependsOnOrderNamesAndShapes)
{
    auto a = AdapterLayout::Create({{"a", 2, 3}, {"b", 4, 5}}).value();
    auto b = AdapterLayout::Create({{"b", 4, 5}, {"a", 2, 3}}).value();
    auto c = AdapterLayout::Create({{"a", 3, 2}, {"b", 4, 5}}).value();
    EXPECT_NE(a.Fingerprint(), b.Fingerprint());
    EXPECT_NE(a.Fingerprint(), c.Fingerprint());
    EXPECT_EQ(a.Fingerprint(), AdapterLayout::Create({{"a", 2, 3}, {"b", 4, 5}})->Fingerprint());
}

TEST(LoraLayout, Qwen7bRank64HasTheExpectedParameterCount)
{
    const TransformerShape s = Qwen25_7bShape();
    auto layout = LoraLayout(s.layers, AllLinearTargets(s), 64).value();
    // Per layer: r * (in + out) summed over q,k,v,o,gate,up,down = 90,112 r.
    EXPECT_EQ(layout.numel(), 28 * 90112 * 64);
    EXPECT_EQ(layout.numel(), 161480704);
    EXPECT_EQ(layout.size(), 28u * 7u * 2u);
    EXPECT_EQ(layout.matrix(0).name, "layers.0.q.lora_A");
    EXPECT_EQ(layout.matrix(0).rows, 64);
    EXPECT_EQ(layout.matrix(0).cols, 3584);
    EXPECT_EQ(layout.matrix(3).name, "layers.0.k.lora_B");
    EXPECT_EQ(layout.matrix(3).rows, 512);
}

TEST(Hash, Xxh64KnownValues)
{
    // Reference values of XXH64 with seed 0.
    EXPECT_EQ(HashBytes("", 0), 0xef46db3751d8e999ull);
    EXPECT_EQ(HashBytes("abc", 3), 0x44bc2cf5ad770999ull);
    Hasher h;
    h.AddBytes("ab", 2);
    h.AddBytes("c", 1);
    EXPECT_EQ(h.Digest(), 0x44bc2cf5ad770999ull);
}

TEST(Crc32c, StandardCheckValue)
{
    EXPECT_EQ(Crc32c("123456789", 9), 0xe3069283u);
    EXPECT_EQ(Crc32c("", 0), 0u);
    // Streaming equals one shot, across the 8-byte fast path boundary.
    const std::string s = "The quick brown fox jumps over the lazy dog";
    EXPECT_EQ(Crc32c(s.data() + 13, s.size() - 13, Crc32c(s.data(), 13)),
              Crc32c(s.data(), s.size()));
}

TEST(ValueDtype, Bf16MatchesC10OnManyValues)
{
    std::vector<float> values = {0.0f,
                                 -0.0f,
                                 1.0f,
                                 -1.0f,
                                 3.14159f,
                                 1e-30f,
                                 1e30f,
                                 65504.0f,
                                 std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::denorm_min()};
    uint32_t bits = 0x12345u;
    for (int i = 0; i < 20000; ++i)
    {
        bits = bits * 1664525u + 1013904223u;
        const float f = BitsToFloat(bits);
        if (!std::isnan(f))
            values.push_back(f);
    }
    for (float f : values)
    {
        const c10::BFloat16 ref(f); // round to nearest even
        ASSERT_EQ(FloatToBf16(f), ref.x) << f;
        ASSERT_EQ(FloatBits(Bf16ToFloat(FloatToBf16(f))), FloatBits(static_cast<float>(ref))) << f;
    }
    EXPECT_TRUE(std::isnan(RoundBf16(std::numeric_limits<float>::quiet_NaN())));
}

TEST(ValueDtype, Fp16MatchesC10)
{
    // Every half value decodes like c10::Half ...
    for (uint32_t h = 0; h < 65536; ++h)
    {
        const float ref = c10::Half(static_cast<uint16_t>(h), c10::Half::from_bits());
        const float got = Fp16ToFloat(static_cast<uint16_t>(h));
        if (std::isnan(ref))
        {
            ASSERT_TRUE(std::isnan(got)) << h;
            continue;
        }
        ASSERT_EQ(FloatBits(got), FloatBits(ref)) << h;
    }
    // ... and encoding rounds like c10 on random floats across the whole range.
    uint32_t bits = 0x777u;
    for (int i = 0; i < 200000; ++i)
    {
        bits = bits * 1664525u + 1013904223u;
        const float f = BitsToFloat(bits);
        if (std::isnan(f))
            continue;
        ASSERT_EQ(FloatToFp16(f), c10::Half(f).x) << f;
    }
}

TEST(Coding, RoundTripAndTruncation)
{
    std::string buf;
    ByteWriter w(&buf);
    w.PutU8(7);
    w.PutU16(0xbeef);
    w.PutU32(0xdeadbeef);
    w.PutU64(0x0123456789abcdefull);
    w.PutVarint(300);
    const float f[3] = {1.5f, -2.25f, 1e-3f};
    w.PutFloats(f, 3, ValueDtype::kBf16);

    ByteReader r(buf);
    uint8_t a;
    uint16_t b;
    uint32_t c;
    uint64_t d, e;
    float out[3];
    ASSERT_TRUE(r.GetU8(&a) && r.GetU16(&b) && r.GetU32(&c) && r.GetU64(&d) && r.GetVarint(&e));
    ASSERT_TRUE(r.GetFloats(out, 3, ValueDtype::kBf16));
    EXPECT_EQ(a, 7);
    EXPECT_EQ(b, 0xbeef);
    EXPECT_EQ(c, 0xdeadbeefu);
    EXPECT_EQ(d, 0x0123456789abcdefull);
    EXPECT_EQ(e, 300u);
    EXPECT_EQ(out[0], 1.5f);
    EXPECT_EQ(out[1], -2.25f);
    EXPECT_EQ(out[2], RoundBf16(1e-3f));
    EXPECT_TRUE(r.empty());

    ByteReader short_reader(std::string_view(buf).substr(0, 5));
    uint8_t x;
    uint64_t y;
    EXPECT_TRUE(short_reader.GetU8(&x));
    EXPECT_FALSE(short_reader.GetU64(&y));
    // A reader asked for more floats than bytes remain refuses before writing anything.
    ByteReader r2(std::string_view(buf).substr(0, 4));
    EXPECT_FALSE(r2.GetFloats(out, size_t{1} << 60, ValueDtype::kFp32));
}

TEST(Coding, F64KeepsEveryBitPatternAndIsLittleEndian)
{
    const uint64_t patterns[] = {
        0x3ff0000000000000ull, // 1.0
        0x8000000000000000ull, // -0.0
        0x0000000000000001ull, // the smallest subnormal
        0x7fefffffffffffffull, // DBL_MAX
        0x7ff0000000000000ull, // +inf
        0xfff0000000000000ull, // -inf
        0x7ff8000000000000ull, // the default quiet NaN
        0xfff8000000000abcull, // a negative quiet NaN with a payload
        0x7ff0000000000001ull, // a signalling NaN pattern
    };
    std::string buf;
    ByteWriter w(&buf);
    for (uint64_t p : patterns)
    {
        double v = 0;
        std::memcpy(&v, &p, sizeof v);
        w.PutF64(v);
    }
    ASSERT_EQ(buf.size(), 8 * (sizeof patterns / sizeof patterns[0]));
    // Golden: 1.0 is 00 00 00 00 00 00 f0 3f, -0.0 is 00 .. 00 80.
    EXPECT_EQ(buf.substr(0, 8), std::string("\0\0\0\0\0\0\xf0\x3f", 8));
    EXPECT_EQ(buf.substr(8, 8), std::string("\0\0\0\0\0\0\0\x80", 8));
    ByteReader r(buf);
    for (uint64_t p : patterns)
    {
        double v = 1.0;
        ASSERT_TRUE(r.GetF64(&v));
        uint64_t back = 0;
        std::memcpy(&back, &v, sizeof back);
        EXPECT_EQ(back, p);
    }
    EXPECT_TRUE(r.empty());
    // Seven bytes are not a double, and a failed read leaves the value alone.
    ByteReader short_reader(std::string_view(buf).substr(0, 7));
    double untouched = 2.5;
    EXPECT_FALSE(short_reader.GetF64(&untouched));
    EXPECT_EQ(untouched, 2.5);
    EXPECT_EQ(short_reader.remaining(), 7u);
}

TEST(Budget, ResolvesBytesAndFractions)
{
    EXPECT_EQ(Budget::Bytes(1000).ResolveBytes(1 << 20), 1000);
    EXPECT_EQ(Budget::Fraction(0.016).ResolveBytes(1000000), 16000);
    EXPECT_GT(Budget::Unlimited().ResolveBytes(10), int64_t{1} << 40);
    EXPECT_FALSE(Budget::Bytes(0).Validate().ok());
    EXPECT_FALSE(Budget::Fraction(-0.1).Validate().ok());
    EXPECT_EQ(Budget::Fraction(0.05).ToString(), "5%");
}

TEST(CompressorOptions, StrictReader)
{
    CompressorOptions o = ParseCompressorOptions("dtype=bf16;rank=4").value();
    OptionReader r("x", o);
    EXPECT_EQ(r.Dtype("dtype", ValueDtype::kFp32, {ValueDtype::kFp32, ValueDtype::kBf16}),
              ValueDtype::kBf16);
    EXPECT_EQ(r.Int("rank", 1, 1, 10), 4);
    EXPECT_TRUE(r.Finish().ok());
    EXPECT_EQ(FormatCompressorOptions(o), "dtype=bf16;rank=4");

    CompressorOptions typo = {{"dtpye", "bf16"}};
    OptionReader r2("dense", typo);
    r2.Dtype("dtype", ValueDtype::kFp32, {ValueDtype::kFp32});
    Status s = r2.Finish();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("'dtpye'"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("allowed: dtype"), std::string::npos) << s.message();

    CompressorOptions bad = {{"rank", "99"}};
    OptionReader r3("x", bad);
    r3.Int("rank", 1, 1, 10);
    EXPECT_NE(r3.Finish().message().find("outside"), std::string::npos);
    EXPECT_FALSE(ParseCompressorOptions("novalue").ok());
}

} // namespace
} // namespace hilo
