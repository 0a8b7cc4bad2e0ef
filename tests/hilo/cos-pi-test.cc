// CosPi (the learning-rate schedule's cosine, computed without the host's libm): exact at the
// points where cos(pi p) is representable, within kMaxUlp of an independent long-double Taylor
// reference (no libm call either) everywhere on a fine grid, and the cosine schedule's rates are
// pinned to golden bits, so a host or compiler that rounds differently fails here.
#include "hilo/optim/cos-pi.h"
#include "hilo/optim/optimizer-config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace hilo
{
namespace
{

constexpr double kMaxUlp = 2.0;

/// A Taylor series in long double, summed until the terms vanish: cos(x) (odd = false) or sin(x).
long double
Series(long double x, bool odd)
{
    const long double z = x * x;
    long double term = odd ? x : 1.0L;
    long double sum = term;
    for (int n = 1; n < 40; ++n)
    {
        const int a = odd ? 2 * n : 2 * n - 1;
        term = -term * z / static_cast<long double>(a * (a + 1));
        sum += term;
    }
    return sum;
}

/// cos(pi p) in long double (64-bit significand): near p = 1/2 as sin(pi (1/2 - p)), so that the
/// reference keeps its relative accuracy where cos(pi p) is small (1/2 - p and 1 - p are exact
/// in long double for a double p).
long double
ReferenceCosPi(double p)
{
    const long double pi = 3.14159265358979323846264338327950288L;
    const long double lp = p;
    if (lp <= 0.25L)
        return Series(pi * lp, false);
    if (lp >= 0.75L)
        return -Series(pi * (1.0L - lp), false);
    return Series(pi * (0.5L - lp), true);
}

/// |a - ref| in units of the last place of double at ref.
double
UlpError(double a, long double ref)
{
    const double r = static_cast<double>(ref);
    const double ulp = std::nextafter(std::fabs(r), INFINITY) - std::fabs(r);
    return static_cast<double>(std::fabs(static_cast<long double>(a) - ref) /
                               static_cast<long double>(ulp));
}

uint32_t
Bits(float f)
{
    uint32_t b;
    std::memcpy(&b, &f, sizeof(b));
    return b;
}

TEST(CosPi, ExactWhereRepresentable)
{
    EXPECT_EQ(CosPi(0.0), 1.0);
    EXPECT_EQ(CosPi(0.5), 0.0);
    EXPECT_EQ(CosPi(1.0), -1.0);
}

TEST(CosPi, WithinTwoUlpOfAnIndependentReference)
{
    double worst = 0.0;
    double worst_p = 0.0;
    const int n = 100000;
    for (int i = 0; i <= n; ++i)
    {
        const double p = static_cast<double>(i) / n;
        if (p == 0.5)
            continue; // exact zero, checked above; ulp at 0 is meaningless
        const double e = UlpError(CosPi(p), ReferenceCosPi(p));
        if (e > worst)
        {
            worst = e;
            worst_p = p;
        }
    }
    EXPECT_LE(worst, kMaxUlp) << "at p = " << worst_p;
    // Known values against correctly rounded square roots, not the series.
    EXPECT_LE(UlpError(CosPi(0.25), std::sqrt(0.5L)), kMaxUlp);
    EXPECT_LE(UlpError(CosPi(0.75), -std::sqrt(0.5L)), kMaxUlp);
    EXPECT_LE(UlpError(CosPi(1.0 / 6.0), std::sqrt(3.0L) / 2.0L), kMaxUlp + 1.0); // p inexact
    EXPECT_LE(UlpError(CosPi(1.0 / 3.0), ReferenceCosPi(1.0 / 3.0)), kMaxUlp);
}

TEST(CosPi, SymmetricAboutOneHalf)
{
    for (int i = 0; i <= 1024; ++i)
    {
        const double p = static_cast<double>(i) / 2048.0; // [0, 1/2], dyadic: 1 - p exact
        EXPECT_EQ(CosPi(1.0 - p), -CosPi(p)) << p;
    }
}

uint64_t
Bits64(double d)
{
    uint64_t b;
    std::memcpy(&b, &d, sizeof(b));
    return b;
}

TEST(CosPi, GoldenBits)
{
    // CosPi's bits at a few points, computed once by this implementation: another cosine (the
    // host's std::cos, another series or evaluation order) differs in some last bits.
    const std::pair<double, uint64_t> golden[] = {
        {0.1, 4606741575090066687u},  {0.2, 4605462196814083240u},   {0.3, 4603469518431672926u},
        {0.45, 4594804165878240116u}, {0.6, 13822610412055554382u},  {0.7, 13826841555286448733u},
        {0.9, 13830113611944842496u}, {0.999, 13830554411206083071u}};
    for (const auto& [p, bits] : golden)
    {
        EXPECT_EQ(Bits64(CosPi(p)), bits) << "p = " << p << ": " << std::hexfloat << CosPi(p);
    }
}

TEST(CosPi, CosineScheduleGoldenBits)
{
    LrSchedule s;
    s.kind = LrScheduleKind::kCosine;
    s.base_lr = 3e-4f;
    s.warmup_steps = 7;
    s.total_steps = 1000;
    s.min_lr_ratio = 0.05f;
    // Bits of LearningRate, computed once by this implementation (the float rate hides most
    // last-bit differences of the cosine; CosPi's own golden bits above do not).
    const std::pair<uint64_t, uint32_t> golden[] = {
        {8, 966609209u},   {100, 966398824u}, {333, 963765819u}, {503, 958751513u},
        {777, 944609402u}, {999, 930851732u}, {1000, 930850947u}};
    for (const auto& [step, bits] : golden)
    {
        EXPECT_EQ(Bits(LearningRate(s, step)), bits) << "step " << step;
    }
}

} // namespace
} // namespace hilo
