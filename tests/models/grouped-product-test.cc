// GroupedProduct (one direct BLAS call per row group) against GroupedProductBmm (at::bmm), bit for
// bit, on random shapes that cover every shape the tiny model's generation multiplies: widths of
// the residual stream, the MLP, the LoRA rank and the vocabulary, one row (decode) or a prompt's
// rows per sequence, a worker's rows per group, equal and unequal groups, products on both sides
// of at::bmm's threshold for its own loop, and non-contiguous inputs.
#include "models/grouped-product.h"
#include "models/seeded-rng.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <cstring>

namespace models
{
namespace
{

bool
BitIdentical(const at::Tensor& a, const at::Tensor& b)
{
    if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type())
    {
        return false;
    }
    const at::Tensor ac = a.contiguous();
    const at::Tensor bc = b.contiguous();
    return std::memcmp(ac.data_ptr(), bc.data_ptr(), ac.numel() * ac.element_size()) == 0;
}

void
ExpectSameAsBmm(const at::Tensor& x, const at::Tensor& w, const std::vector<int64_t>& groups)
{
    const at::Tensor direct = GroupedProduct(x, w, groups);
    const at::Tensor bmm = GroupedProductBmm(x, w, groups);
    std::string shape = "x " + std::to_string(x.size(0)) + "x" + std::to_string(x.size(1)) + "x" +
                        std::to_string(x.size(2)) + ", w " + std::to_string(w.size(0)) + "x" +
                        std::to_string(w.size(1)) + ", groups";
    for (int64_t g : groups)
    {
        shape += " " + std::to_string(g);
    }
    EXPECT_TRUE(BitIdentical(direct, bmm)) << shape;
}

TEST(GroupedProduct, BitIdenticalToBmmOnRandomShapes)
{
    // Widths the scenarios use: d_model (16..256), 4 x d_model (MLP), LoRA ranks (1..64),
    // vocabularies (21 for randomwalks, 64, 256 for the text base), and odd ones.
    const std::vector<int64_t> widths{1, 3, 4, 8, 16, 21, 32, 48, 64, 96, 128, 256, 512};
    const std::vector<int64_t> tokens{1, 1, 1, 2, 6, 8}; // decode steps dominate, then prompts
    SeededRng rng(2024);
    at::Generator gen = at::detail::createCPUGenerator(7);
    auto pick = [&](const std::vector<int64_t>& v) { return v[rng.Below(v.size())]; };
    for (int c = 0; c < 300; ++c)
    {
        const int64_t d_in = pick(widths);
        const int64_t d_out = pick(widths);
        const int64_t n = pick(tokens);
        const int64_t count = 1 + static_cast<int64_t>(rng.Below(c % 3 == 0 ? 40 : 6));
        std::vector<int64_t> groups;
        const bool equal = c % 2 == 0;
        const int64_t rows = 1 + static_cast<int64_t>(rng.Below(33));
        int64_t total = 0;
        for (int64_t i = 0; i < count; ++i)
        {
            groups.push_back(equal ? rows : 1 + static_cast<int64_t>(rng.Below(33)));
            total += groups.back();
        }
        const at::Tensor x = at::randn({total, n, d_in}, gen, at::kFloat);
        const at::Tensor w = at::randn({d_out, d_in}, gen, at::kFloat);
        ExpectSameAsBmm(x, w, groups);
    }
}

TEST(GroupedProduct, BitIdenticalToBmmAtTheQuickstartSize)
{
    // A rollout chunk of the quickstart: 256 workers of 4 rows, d_model 128, MLP 512, rank 64,
    // vocabulary 64; prompts of 8 tokens, then decode steps of one.
    at::Generator gen = at::detail::createCPUGenerator(11);
    const std::vector<int64_t> groups(256, 4);
    const std::vector<std::pair<int64_t, int64_t>> shapes{
        {128, 128}, {128, 64}, {64, 128}, {128, 512}, {512, 128}, {512, 64}, {64, 512}};
    for (int64_t n : {1, 8})
    {
        for (const auto& [d_in, d_out] : shapes)
        {
            const at::Tensor x = at::randn({1024, n, d_in}, gen, at::kFloat);
            const at::Tensor w = at::randn({d_out, d_in}, gen, at::kFloat);
            ExpectSameAsBmm(x, w, groups);
        }
    }
}

TEST(GroupedProduct, NonContiguousOperands)
{
    at::Generator gen = at::detail::createCPUGenerator(3);
    // x as the attention output is made: a transposed view; w as a slice of a wider matrix.
    const at::Tensor x = at::randn({12, 32, 5}, gen, at::kFloat).transpose(1, 2); // [12, 5, 32]
    const at::Tensor w = at::randn({24, 64}, gen, at::kFloat).narrow(1, 16, 32);  // [24, 32]
    ASSERT_FALSE(x.is_contiguous());
    ASSERT_FALSE(w.is_contiguous());
    ExpectSameAsBmm(x, w, {4, 4, 4});
    ExpectSameAsBmm(x, w, {2, 7, 3});
}

TEST(GroupedProduct, GradientsFlowThroughTheBmmPath)
{
    at::Generator gen = at::detail::createCPUGenerator(5);
    const at::Tensor x = at::randn({6, 3, 16}, gen, at::kFloat);
    const at::Tensor w = at::randn({8, 16}, gen, at::kFloat).requires_grad_(true);
    GroupedProduct(x, w, {3, 3}).sum().backward();
    ASSERT_TRUE(w.grad().defined());
    // d/dW of sum(x W^T) is the column sums of x over every row: sum over rows of x.
    const at::Tensor expected = x.sum(at::IntArrayRef{0, 1}).unsqueeze(0).expand({8, 16});
    EXPECT_TRUE(at::allclose(w.grad(), expected, 1e-5, 1e-5));
}

TEST(GroupedProduct, GroupsThatDoNotCoverTheRowsAreRefused)
{
    const at::Tensor x = at::ones({5, 1, 32}, at::kFloat);
    const at::Tensor w = at::ones({32, 32}, at::kFloat);
    EXPECT_THROW(GroupedProduct(x, w, {2, 2}), std::exception);
    EXPECT_THROW(GroupedProduct(x, w, {4, 4}), std::exception);
}

} // namespace
} // namespace models
