#include "hilo/compress/small-eigen.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>
#include <utility>

namespace hilo
{
namespace
{

// Cyclic sweeps before giving up (Jacobi converges quadratically; 8 x 8 needs ~6).
constexpr int kMaxSweeps = 64;
// A column whose norm after orthogonalization falls below this fraction of its norm before has
// vanished (rank deficiency), relative to double precision.
constexpr double kVanished = 1e-10;

/// Makes column j of the m x l row-major `y` orthogonal to columns 0..j-1 (assumed
/// orthonormal), twice; returns its norm before and after.
std::pair<double, double>
OrthogonalizeColumn(int64_t m, int64_t l, int64_t j, double* y)
{
    double before = 0.0;
    for (int64_t r = 0; r < m; ++r)
        before += y[r * l + j] * y[r * l + j];
    for (int pass = 0; pass < 2; ++pass)
    {
        for (int64_t k = 0; k < j; ++k)
        {
            double dot = 0.0;
            for (int64_t r = 0; r < m; ++r)
                dot += y[r * l + k] * y[r * l + j];
            for (int64_t r = 0; r < m; ++r)
                y[r * l + j] -= dot * y[r * l + k];
        }
    }
    double after = 0.0;
    for (int64_t r = 0; r < m; ++r)
        after += y[r * l + j] * y[r * l + j];
    return {std::sqrt(before), std::sqrt(after)};
}

} // namespace

void
SymmetricEigen(int64_t n, std::vector<double> a, std::vector<double>* values,
               std::vector<double>* vectors)
{
    std::vector<double> v(static_cast<size_t>(n * n), 0.0);
    for (int64_t i = 0; i < n; ++i)
        v[i * n + i] = 1.0;
    for (int sweep = 0; sweep < kMaxSweeps; ++sweep)
    {
        bool rotated = false;
        for (int64_t p = 0; p < n; ++p)
        {
            for (int64_t q = p + 1; q < n; ++q)
            {
                const double apq = a[p * n + q];
                const double app = a[p * n + p];
                const double aqq = a[q * n + q];
                // Negligible next to both diagonal entries: zero it without a rotation.
                if (apq == 0.0 || (std::fabs(app) + std::fabs(apq) * 1e2 == std::fabs(app) &&
                                   std::fabs(aqq) + std::fabs(apq) * 1e2 == std::fabs(aqq)))
                {
                    a[p * n + q] = 0.0;
                    a[q * n + p] = 0.0;
                    continue;
                }
                rotated = true;
                // The rotation that zeroes a_pq (smaller angle): t = tan, c = cos, s = sin.
                const double theta = (aqq - app) / (2.0 * apq);
                const double t = (theta >= 0.0 ? 1.0 : -1.0) /
                                 (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
                const double c = 1.0 / std::sqrt(t * t + 1.0);
                const double s = t * c;
                for (int64_t k = 0; k < n; ++k) // A J
                {
                    const double akp = a[k * n + p];
                    const double akq = a[k * n + q];
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for (int64_t k = 0; k < n; ++k) // J^T (A J)
                {
                    const double apk = a[p * n + k];
                    const double aqk = a[q * n + k];
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                a[p * n + q] = 0.0;
                a[q * n + p] = 0.0;
                for (int64_t k = 0; k < n; ++k) // V J
                {
                    const double vkp = v[k * n + p];
                    const double vkq = v[k * n + q];
                    v[k * n + p] = c * vkp - s * vkq;
                    v[k * n + q] = s * vkp + c * vkq;
                }
            }
        }
        if (!rotated)
            break;
    }
    // Descending eigenvalues; ties keep their index order.
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t x, int64_t y) { return a[x * n + x] > a[y * n + y]; });
    values->resize(static_cast<size_t>(n));
    vectors->resize(static_cast<size_t>(n * n));
    for (int64_t j = 0; j < n; ++j)
    {
        const int64_t src = order[static_cast<size_t>(j)];
        (*values)[static_cast<size_t>(j)] = a[src * n + src];
        for (int64_t k = 0; k < n; ++k)
            (*vectors)[static_cast<size_t>(k * n + j)] = v[k * n + src];
    }
}

void
OrthonormalizeColumns(int64_t m, int64_t l, std::vector<double>* y_in)
{
    double* y = y_in->data();
    int64_t next_unit = 0; // the next e_r to try for a vanished column
    for (int64_t j = 0; j < l; ++j)
    {
        auto [before, after] = OrthogonalizeColumn(m, l, j, y);
        while (!(after > kVanished * before) || !(after > 0.0))
        {
            // Vanished (or not finite): try e_r, r = next_unit, next_unit + 1, ... At most j of
            // the independent e_r lie in the span of the j earlier columns, so one survives.
            for (int64_t r = 0; r < m; ++r)
                y[r * l + j] = r == next_unit ? 1.0 : 0.0;
            ++next_unit;
            std::tie(before, after) = OrthogonalizeColumn(m, l, j, y);
            if (next_unit > m)
                break;
        }
        const double inv = 1.0 / after;
        for (int64_t r = 0; r < m; ++r)
            y[r * l + j] *= inv;
    }
}

} // namespace hilo
