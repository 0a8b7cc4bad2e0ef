// The warm sketch's fused pass: W = X^T Q and Z = X W formed block by block along the long side
// equal the plain products (in double) for both storage orders and a long side that leaves a
// partial last block.
#include "hilo/compress/sketch-pass.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace hilo
{
namespace
{

struct Case
{
    int64_t rows;
    int64_t cols;
    int64_t l;
};

/// Max |a - b| / max |b| over the entries.
double
RelativeMaxError(const at::Tensor& a, const at::Tensor& b)
{
    return (a.to(at::kDouble) - b).abs().max().item<double>() / b.abs().max().item<double>();
}

class SketchPassCase : public ::testing::TestWithParam<Case>
{
};

TEST_P(SketchPassCase, EqualsThePlainProducts)
{
    const Case c = GetParam();
    const int64_t m = std::min(c.rows, c.cols);
    const int64_t d = std::max(c.rows, c.cols);
    at::Generator gen = at::detail::createCPUGenerator(7);
    const at::Tensor stored = at::randn({c.rows, c.cols}, gen).contiguous();
    const at::Tensor q = at::randn({m, c.l}, gen).contiguous();
    const at::Tensor xs = (c.rows <= c.cols ? stored : stored.t()).to(at::kDouble); // m x d
    const at::Tensor w_ref = at::mm(xs.t(), q.to(at::kDouble));
    const at::Tensor z_ref = at::mm(xs, w_ref);

    std::vector<float> w(static_cast<size_t>(d * c.l), -1.0f);
    std::vector<float> z(static_cast<size_t>(m * c.l), 1e30f); // overwritten, not added to
    SketchPass(stored.data_ptr<float>(), c.rows, c.cols, q.data_ptr<float>(), c.l, w.data(),
               z.data());
    EXPECT_LT(RelativeMaxError(at::from_blob(w.data(), {d, c.l}), w_ref), 1e-5);
    EXPECT_LT(RelativeMaxError(at::from_blob(z.data(), {m, c.l}), z_ref), 1e-5);

    // Without Z: the same W, nothing else written.
    std::vector<float> w_only(w.size(), 0.0f);
    SketchPass(stored.data_ptr<float>(), c.rows, c.cols, q.data_ptr<float>(), c.l, w_only.data(),
               nullptr);
    EXPECT_EQ(w_only, w);

    std::vector<float> h(static_cast<size_t>(c.l * c.l));
    ColumnGram(w.data(), d, c.l, h.data());
    const at::Tensor wd = at::from_blob(w.data(), {d, c.l}).to(at::kDouble);
    EXPECT_LT(RelativeMaxError(at::from_blob(h.data(), {c.l, c.l}), at::mm(wd.t(), wd)), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    SketchPass, SketchPassCase,
    ::testing::Values(Case{16, 2 * kSketchBlock + 37, 8}, // wide: X is the stored matrix
                      Case{2 * kSketchBlock + 37, 16, 8}, // tall: X is its transpose
                      Case{24, kSketchBlock, 3},          // exactly one block, odd width
                      Case{kSketchBlock + 1, 12, 16},     // a last block of one column
                      Case{6, 40, 1}));                   // shorter than a block

} // namespace
} // namespace hilo
