// Compiled with -ffp-contract=off (CMakeLists.txt): do not reorder the arithmetic.
#include "hilo/optim/cos-pi.h"

namespace hilo
{
namespace
{

constexpr double kPi = 3.14159265358979323846;

/// cos(x) for |x| <= pi/4: 1 - x^2/2! + x^4/4! - ... - x^18/18! (Horner in x^2). The first term
/// left out, x^20/20!, is below 2^-70 there.
double
CosSeries(double x)
{
    const double z = x * x;
    double r = -1.0 / 6402373705728000.0; // -1/18!
    r = r * z + 1.0 / 20922789888000.0;   // 1/16!
    r = r * z - 1.0 / 87178291200.0;      // 1/14!
    r = r * z + 1.0 / 479001600.0;        // 1/12!
    r = r * z - 1.0 / 3628800.0;          // 1/10!
    r = r * z + 1.0 / 40320.0;            // 1/8!
    r = r * z - 1.0 / 720.0;              // 1/6!
    r = r * z + 1.0 / 24.0;               // 1/4!
    r = r * z - 0.5;                      // 1/2!
    r = r * z;
    return 1.0 + r;
}

/// sin(x) for |x| <= pi/4: x - x^3/3! + ... + x^17/17! (Horner in x^2); x^19/19! < 2^-72 there.
double
SinSeries(double x)
{
    const double z = x * x;
    double r = 1.0 / 355687428096000.0; // 1/17!
    r = r * z - 1.0 / 1307674368000.0;  // 1/15!
    r = r * z + 1.0 / 6227020800.0;     // 1/13!
    r = r * z - 1.0 / 39916800.0;       // 1/11!
    r = r * z + 1.0 / 362880.0;         // 1/9!
    r = r * z - 1.0 / 5040.0;           // 1/7!
    r = r * z + 1.0 / 120.0;            // 1/5!
    r = r * z - 1.0 / 6.0;              // 1/3!
    r = r * z;
    r = r * x;
    return x + r;
}

} // namespace

double
CosPi(double p)
{
    // cos(pi p) = -cos(pi (1 - p)); 1 - p is exact for p in [1/2, 1] (Sterbenz).
    bool negate = false;
    if (p > 0.5)
    {
        p = 1.0 - p;
        negate = true;
    }
    // p in [0, 1/2]: cos(pi p) directly up to 1/4, else sin(pi (1/2 - p)) with 1/2 - p exact.
    const double r = p <= 0.25 ? CosSeries(kPi * p) : SinSeries(kPi * (0.5 - p));
    return negate ? -r : r;
}

} // namespace hilo
