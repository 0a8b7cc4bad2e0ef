// The sketch's small dense kernels: Jacobi eigenpairs of symmetric matrices against known values
// and LAPACK's, and orthonormal bases that survive rank-deficient input.
#include "hilo/compress/small-eigen.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <vector>

namespace hilo
{
namespace
{

at::Tensor
AsTensor(const std::vector<double>& v, int64_t rows, int64_t cols)
{
    return at::from_blob(const_cast<double*>(v.data()), {rows, cols}, at::kDouble).clone();
}

TEST(SymmetricEigen, KnownValues)
{
    std::vector<double> values, vectors;
    SymmetricEigen(2, {2.0, 1.0, 1.0, 2.0}, &values, &vectors);
    ASSERT_EQ(values.size(), 2u);
    EXPECT_NEAR(values[0], 3.0, 1e-15);
    EXPECT_NEAR(values[1], 1.0, 1e-15);
    // (1, 1) / sqrt 2 up to sign.
    EXPECT_NEAR(std::fabs(vectors[0]), std::sqrt(0.5), 1e-15);
    EXPECT_NEAR(vectors[0], vectors[2], 1e-15);

    // Already diagonal, unsorted: sorted, with the matching unit vectors.
    SymmetricEigen(3, {1.0, 0, 0, 0, 5.0, 0, 0, 0, -2.0}, &values, &vectors);
    EXPECT_EQ(values, (std::vector<double>{5.0, 1.0, -2.0}));
    EXPECT_EQ(vectors, (std::vector<double>{0, 1, 0, 1, 0, 0, 0, 0, 1}));
}

TEST(SymmetricEigen, MatchesLapackOnRandomGramMatrices)
{
    at::Generator gen = at::detail::createCPUGenerator(11);
    for (int64_t n : {1, 3, 8, 16, 33})
    {
        // A Gram matrix with a steep spectrum (the Rayleigh-Ritz matrices' shape).
        const at::Tensor b =
            at::randn({n, n}, gen, at::kDouble) * at::pow(10.0, -at::arange(n, at::kDouble) / 2.0);
        const at::Tensor a = at::mm(b, b.t()).contiguous();
        std::vector<double> values, vectors;
        SymmetricEigen(n, std::vector<double>(a.data_ptr<double>(), a.data_ptr<double>() + n * n),
                       &values, &vectors);
        const at::Tensor ref = std::get<0>(at::linalg_eigh(a)).flip({0});
        const at::Tensor got = AsTensor(values, n, 1).view({n});
        const double scale = ref.abs().max().item<double>();
        EXPECT_LT((got - ref).abs().max().item<double>(), 1e-12 * scale) << "n = " << n;
        for (int64_t j = 1; j < n; ++j)
            EXPECT_GE(values[j - 1], values[j]);
        const at::Tensor v = AsTensor(vectors, n, n);
        EXPECT_LT((at::mm(v.t(), v) - at::eye(n, at::kDouble)).abs().max().item<double>(), 1e-12);
        EXPECT_LT((at::mm(a, v) - v * got).abs().max().item<double>(), 1e-12 * scale);
    }
}

TEST(OrthonormalizeColumns, SpansTheLeadingColumnsAndIsOrthonormal)
{
    at::Generator gen = at::detail::createCPUGenerator(12);
    const at::Tensor y = at::randn({10, 4}, gen, at::kDouble).contiguous();
    std::vector<double> q(y.data_ptr<double>(), y.data_ptr<double>() + 40);
    OrthonormalizeColumns(10, 4, &q);
    const at::Tensor qt = AsTensor(q, 10, 4);
    EXPECT_LT((at::mm(qt.t(), qt) - at::eye(4, at::kDouble)).abs().max().item<double>(), 1e-14);
    // Q Q^T Y = Y, and column 0 is Y's column 0 normalized.
    EXPECT_LT((at::mm(qt, at::mm(qt.t(), y)) - y).abs().max().item<double>(), 1e-13);
    EXPECT_LT((qt.select(1, 0) - y.select(1, 0) / y.select(1, 0).norm()).abs().max().item<double>(),
              1e-15);
}

TEST(OrthonormalizeColumns, RankDeficientInputStillGivesAnOrthonormalBasis)
{
    // Columns: v, 2 v, 0, w: the second and third vanish and are replaced.
    const int64_t m = 5, l = 4;
    std::vector<double> y(static_cast<size_t>(m * l), 0.0);
    const double v[m] = {1, 0, 0, 0, 0}; // e_0 itself: the first unit vector tried vanishes too
    const double w[m] = {0, 1, 1, 0, 0};
    for (int64_t r = 0; r < m; ++r)
    {
        y[r * l + 0] = v[r];
        y[r * l + 1] = 2 * v[r];
        y[r * l + 3] = w[r];
    }
    OrthonormalizeColumns(m, l, &y);
    const at::Tensor q = AsTensor(y, m, l);
    EXPECT_TRUE(at::isfinite(q).all().item<bool>());
    EXPECT_LT((at::mm(q.t(), q) - at::eye(l, at::kDouble)).abs().max().item<double>(), 1e-14);
    EXPECT_EQ(q[0][0].item<double>(), 1.0);
}

} // namespace
} // namespace hilo
