#include "models/grouped-product.h"

#include "hilo/compress/blas-hooks.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <limits>

namespace models
{

namespace
{

// at::bmm (LibTorch 1.13, bmm_out_or_baddbmm_) multiplies batches with contraction x rows x
// columns below this in a loop of its own rather than through BLAS.
constexpr int64_t kBmmBlasMinWork = 400;

// Whether one sgemm call per group computes exactly what at::bmm computes for these operands.
bool
DirectCallMatchesBmm(const at::Tensor& x, const at::Tensor& w, const std::vector<int64_t>& groups)
{
    if (hilo::Blas().sgemm == nullptr)
    {
        return false; // no sgemm_ in the BLAS LibTorch loaded: its own path
    }
    if (x.scalar_type() != at::kFloat || w.scalar_type() != at::kFloat || !x.device().is_cpu() ||
        !w.device().is_cpu() || x.dim() != 3 || w.dim() != 2 || x.size(2) != w.size(1))
    {
        return false;
    }
    if (at::GradMode::is_enabled() && (x.requires_grad() || w.requires_grad()))
    {
        return false; // autograd needs the graph at::bmm records
    }
    const int64_t n = x.size(1);
    const int64_t d_in = x.size(2);
    const int64_t d_out = w.size(0);
    const int64_t int_max = std::numeric_limits<int>::max();
    int64_t total = 0;
    for (int64_t rows : groups)
    {
        total += rows;
    }
    if (total != x.size(0))
    {
        return false; // at::bmm's reshape reports it
    }
    if (d_in < 1 || d_out < 1 || d_in > int_max || d_out > int_max)
    {
        return false;
    }
    for (int64_t rows : groups)
    {
        const int64_t m = rows * n;
        if (m < 1 || m > int_max || d_in * m * d_out < kBmmBlasMinWork)
        {
            return false;
        }
    }
    return true;
}

} // namespace

at::Tensor
GroupedProductBmm(const at::Tensor& x, const at::Tensor& w, const std::vector<int64_t>& groups)
{
    const int64_t n = x.size(1);
    const int64_t d_in = x.size(2);
    const int64_t d_out = w.size(0);
    const at::Tensor wt = w.t().unsqueeze(0);
    auto product = [&](const at::Tensor& part, int64_t g)
    {
        const int64_t rows = part.size(0) / g;
        return at::bmm(part.reshape({g, rows * n, d_in}), wt.expand({g, d_in, d_out}))
            .reshape({g * rows, n, d_out});
    };
    const bool equal =
        std::all_of(groups.begin(), groups.end(), [&](int64_t r) { return r == groups.front(); });
    if (equal)
    {
        return product(x, static_cast<int64_t>(groups.size()));
    }
    std::vector<at::Tensor> parts;
    int64_t start = 0;
    for (int64_t rows : groups)
    {
        parts.push_back(product(x.narrow(0, start, rows), 1));
        start += rows;
    }
    return at::cat(parts, 0);
}

at::Tensor
GroupedProduct(const at::Tensor& x, const at::Tensor& w, const std::vector<int64_t>& groups)
{
    if (!DirectCallMatchesBmm(x, w, groups))
    {
        return GroupedProductBmm(x, w, groups);
    }
    const at::Tensor xc = x.contiguous();
    const at::Tensor wc = w.contiguous();
    const int64_t n = x.size(1);
    at::Tensor y = at::empty({x.size(0), n, w.size(0)}, x.options());
    // What at::bmm's per-batch matrix product (addmm_impl_cpu_) asks BLAS for a row-major
    // [m, d_in] x [d_in, d_out] product with W^T a transposed view of a row-major W: the
    // column-major y^T = W x^T, i.e. sgemm('t', 'n', d_out, m, d_in, 1, W, d_in, x, d_in, 0, y,
    // d_out). Same routine, same arguments: same bits.
    const char transa = 't';
    const char transb = 'n';
    const int d_out = static_cast<int>(w.size(0));
    const int d_in = static_cast<int>(w.size(1));
    const float alpha = 1.0f;
    const float beta = 0.0f;
    const float* wp = wc.data_ptr<float>();
    const float* xp = xc.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    // sgemm_ looked up in the process (hilo::Blas()), so it is the one LibTorch itself calls,
    // not a second BLAS linked beside it.
    const hilo::SgemmFn sgemm = hilo::Blas().sgemm;
    for (int64_t rows : groups)
    {
        const int m = static_cast<int>(rows * n);
        sgemm(&transa, &transb, &d_out, &m, &d_in, &alpha, wp, &d_in, xp, &d_in, &beta, yp, &d_out);
        xp += static_cast<int64_t>(m) * d_in;
        yp += static_cast<int64_t>(m) * d_out;
    }
    return y;
}

} // namespace models
