// Golden bytes: the payload formats of hilo/wire/FORMAT.md pinned on a tiny adapter. A failure here
// means an encoding changed: bump the compressor's Name() version and FORMAT.md, then update the
// bytes. Spar and powersgd encodes run LAPACK/BLAS (not bit-reproducible across hosts), so their
// formats are pinned through hand-made payloads and exact decodes instead.
#include "hilo/compress/compressor-factory.h"
#include "hilo/core/coding.h"
#include "tests/hilo/compress-test-util.h"

#include <gtest/gtest.h>

namespace hilo
{
namespace
{

AdapterLayout
Tiny()
{
    return AdapterLayout::Create({{"a", 2, 3}, {"b", 3, 2}}).value();
}

const std::vector<float> kX = {0.5f, -3.0f, 0.25f, 1.0f,    0.0f, -0.125f,
                               2.0f, 0.75f, -1.5f, 0.0625f, 4.0f, -0.5f};

std::string
Hex(const std::string& s)
{
    static const char* d = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s)
    {
        out += d[c >> 4];
        out += d[c & 15];
    }
    return out;
}

std::string
EncodeHex(const std::string& kind, const std::string& options, int64_t budget)
{
    auto c = testing::MakeCompressor(kind, Tiny(), options);
    StatusOr<Encoded> e = c->Encode(kX, budget);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? Hex(e->payload) : "";
}

TEST(CompressorGolden, TopK)
{
    // dtype 0, scope 0, k = 5; Elias-Fano L = 0 and upper bits 0x4912 (positions 1 4 8 11 14:
    // indices 1 3 6 8 10); values -3, 1, 2, -1.5, 4 in fp32.
    EXPECT_EQ(EncodeHex("topk", "dtype=fp32", 30),
              "000005001249000040c00000803f000000400000c0bf00008040");
}

TEST(CompressorGolden, TopKPerMatrix)
{
    EXPECT_EQ(EncodeHex("topk", "dtype=bf16;scope=per_matrix", 16),
              "010102001202002140c0803f00408040");
}

TEST(CompressorGolden, RandK)
{
    // dtype 1, flags 0, the first payload seed of stream 3, k = 4, bf16 values of entries 2, 3,
    // 7, 11 (one per stratum of three).
    EXPECT_EQ(EncodeHex("randk", "dtype=bf16;seed=3", 20),
              "01009788a1969cfdcdbc04803e803f403f00bf");
}

TEST(CompressorGolden, QuantInt8)
{
    // int8, s = 127, max norm, block 4; scales 3, 0.125, 2, 4; then one code per entry.
    EXPECT_EQ(EncodeHex("quant", "block=4;scheme=int8", 1 << 20),
              "017f0004000040400000003e000000400000804015810b2a00817f30a1047ff0");
}

TEST(CompressorGolden, QuantTernary)
{
    EXPECT_EQ(EncodeHex("quant", "block=4;levels=1;seed=1", 1 << 20),
              "00010004000040400000003e000000400000804091607a");
}

TEST(CompressorGolden, SparDecode)
{
    // fp32; 2 matrices; k = (1, 0); sigma 2, u = (1, 0), v = (0.5, 1, -1).
    std::string p;
    ByteWriter w(&p);
    w.PutU8(0);
    w.PutVarint(2);
    w.PutVarint(1);
    w.PutVarint(0);
    const float tri[] = {2.0f, 1.0f, 0.0f, 0.5f, 1.0f, -1.0f};
    w.PutFloats(tri, 6, ValueDtype::kFp32);
    EXPECT_EQ(Hex(p), "00020100000000400000803f000000000000003f0000803f000080bf");
    auto c = testing::MakeCompressor("spar", Tiny(), "dtype=fp32");
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(p, &out).ok());
    EXPECT_EQ(out, (std::vector<float>{1, 2, -2, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
}

TEST(CompressorGolden, PowerSgdDecode)
{
    // bf16; 2 matrices; rank 1; p/q pairs for each matrix.
    std::string p;
    ByteWriter w(&p);
    w.PutU8(1);
    w.PutVarint(2);
    w.PutVarint(1);
    const float a[] = {1.0f, -1.0f, 2.0f, 0.5f, 0.25f}; // p (2), q (3)
    const float b[] = {1.0f, 2.0f, 3.0f, -1.0f, 0.5f};  // p (3), q (2)
    w.PutFloats(a, 5, ValueDtype::kBf16);
    w.PutFloats(b, 5, ValueDtype::kBf16);
    auto c = testing::MakeCompressor("powersgd", Tiny(), "dtype=bf16");
    std::vector<float> out;
    ASSERT_TRUE(c->Decode(p, &out).ok());
    EXPECT_EQ(out,
              (std::vector<float>{2, 0.5f, 0.25f, -2, -0.5f, -0.25f, -1, 0.5f, -2, 1, -3, 1.5f}));
}

} // namespace
} // namespace hilo
