// The learner checkpoint's publish records: golden bytes (doubles as their IEEE-754 bits, every
// field little-endian), and a round trip that keeps -0.0, infinities and NaN bit patterns.
#include "sim/roles/publish-record.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

namespace hilosim
{
namespace
{

uint64_t
BitsOf(double v)
{
    uint64_t b = 0;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

double
WithBits(uint64_t b)
{
    double v = 0;
    std::memcpy(&v, &b, sizeof v);
    return v;
}

PublishEvent
Event()
{
    PublishEvent e;
    e.version = 3;
    e.grad_ready_s = 1.5;
    e.published_s = -0.0;
    e.train_s = 0.1;
    e.encode_s = std::numeric_limits<double>::infinity();
    e.loss = WithBits(0x7ff8000000000abcull); // a quiet NaN with a payload
    e.grad_norm = std::numeric_limits<double>::denorm_min();
    e.drift_rel_l2 = -2.0;
    e.drift_max_abs = 1e300;
    e.payload_bytes = 1000;
    e.frame_bytes = 1100;
    e.wire_bytes = 5;
    e.copies = 2;
    e.state_hash = 0x0123456789abcdefull;
    e.kept_per_matrix = {1, 0, 7};
    e.train_overrun_s = 0.25;
    e.encode_overrun_s = WithBits(0x7ff0000000000001ull); // a signalling NaN pattern
    e.cpu_gradient_s = 3.0;
    e.cpu_encode_s = -std::numeric_limits<double>::infinity();
    e.cpu_apply_s = 0.0;
    return e;
}

std::string
Hex(const std::string& bytes)
{
    static const char* kDigits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes)
    {
        out.push_back(kDigits[c >> 4]);
        out.push_back(kDigits[c & 15]);
    }
    return out;
}

TEST(PublishRecord, GoldenBytes)
{
    std::string bytes;
    hilo::ByteWriter w(&bytes);
    PutPublishEvent(&w, Event());
    // Written by the record format as first committed; a change here breaks every checkpoint.
    const std::string want =
        "0300000000000000000000000000f83f00000000000000809a9999999999b93f000000000000f07f"
        "bc0a00000000f87f010000000000000000000000000000c09c7500883ce4377ee803000000000000"
        "4c0400000000000005000000000000000200000000000000efcdab8967452301000000000000d03f"
        "010000000000f07f0000000000000840000000000000f0ff000000000000000003000000"
        "010000000000000000000000000000000700000000000000";
    EXPECT_EQ(Hex(bytes), want);
}

TEST(PublishRecord, RoundTripKeepsEveryBitPattern)
{
    std::string bytes;
    hilo::ByteWriter w(&bytes);
    const PublishEvent e = Event();
    PutPublishEvent(&w, e);
    hilo::ByteReader r(bytes);
    PublishEvent back;
    ASSERT_TRUE(GetPublishEvent(&r, &back).ok());
    EXPECT_TRUE(r.empty());
    const double PublishEvent::*fields[] = {&PublishEvent::grad_ready_s,
                                            &PublishEvent::published_s,
                                            &PublishEvent::train_s,
                                            &PublishEvent::encode_s,
                                            &PublishEvent::loss,
                                            &PublishEvent::grad_norm,
                                            &PublishEvent::drift_rel_l2,
                                            &PublishEvent::drift_max_abs,
                                            &PublishEvent::train_overrun_s,
                                            &PublishEvent::encode_overrun_s,
                                            &PublishEvent::cpu_gradient_s,
                                            &PublishEvent::cpu_encode_s,
                                            &PublishEvent::cpu_apply_s};
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; ++k)
        EXPECT_EQ(BitsOf(back.*fields[k]), BitsOf(e.*fields[k])) << "field " << k;
    EXPECT_EQ(back.kept_per_matrix, e.kept_per_matrix);
    EXPECT_EQ(back.state_hash, e.state_hash);
    // Every shorter prefix is refused.
    for (size_t n = 0; n < bytes.size(); ++n)
    {
        hilo::ByteReader cut(std::string_view(bytes).substr(0, n));
        PublishEvent p;
        EXPECT_FALSE(GetPublishEvent(&cut, &p).ok()) << n;
    }
}

} // namespace
} // namespace hilosim
