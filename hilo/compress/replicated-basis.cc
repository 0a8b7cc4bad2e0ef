#include "hilo/compress/replicated-basis.h"

#include "hilo/compress/blas-hooks.h"
#include "hilo/compress/counter-rng.h"
#include "hilo/compress/small-eigen.h"
#include "hilo/core/parallel.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

namespace hilo
{
namespace
{

// The stream of the fixed start Q for matrices wider than the kernel (a constant of the format:
// changing it changes every basis=replicated payload).
constexpr uint64_t kStartSeed = 0x5265706c42617369ULL; // "ReplBasi"

bool
AllFinite(const float* p, int64_t n)
{
    for (int64_t k = 0; k < n; ++k)
    {
        if (!std::isfinite(p[k]))
            return false;
    }
    return true;
}

std::vector<float>
ToFloat(const std::vector<double>& v)
{
    return std::vector<float>(v.begin(), v.end());
}

/// The directions of one matrix (rows x cols at `mat`) into `out` (d x width, column-major by
/// direction: direction j at out[j * d]); returns the width.
int64_t
DeriveOne(const float* mat, int64_t rows, int64_t cols, int64_t max_width, SketchIsa isa,
          float* out)
{
    const int64_t m = std::min(rows, cols);
    const int64_t d = std::max(rows, cols);
    if (m == 0 || !AllFinite(mat, rows * cols))
        return 0;
    const int64_t l = std::min(m, kSketchKernelMaxWidth);
    std::vector<float> q(static_cast<size_t>(m * l), 0.0f);
    std::vector<float> w(static_cast<size_t>(d * l));
    std::vector<float> h(static_cast<size_t>(l * l));
    if (m == l)
    {
        for (int64_t r = 0; r < m; ++r)
            q[static_cast<size_t>(r * l + r)] = 1.0f;
    }
    else
    {
        // A fixed +-1 start, orthonormalized, then one power step: Q = orth(M M^T Q0).
        std::vector<double> q0(static_cast<size_t>(m * l));
        for (int64_t k = 0; k < m * l; ++k)
            q0[static_cast<size_t>(k)] =
                (CounterRandom(kStartSeed, static_cast<uint64_t>(k)) & 1) ? 1.0 : -1.0;
        OrthonormalizeColumns(m, l, &q0);
        q = ToFloat(q0);
        std::vector<float> z(static_cast<size_t>(m * l));
        SketchKernel(isa, mat, rows, cols, q.data(), l, w.data(), z.data());
        if (!AllFinite(z.data(), m * l))
            return 0;
        std::vector<double> zd(z.begin(), z.end());
        OrthonormalizeColumns(m, l, &zd);
        q = ToFloat(zd);
    }
    SketchKernel(isa, mat, rows, cols, q.data(), l, w.data(), nullptr, h.data());
    if (!AllFinite(h.data(), l * l) || !AllFinite(w.data(), d * l))
        return 0;
    std::vector<double> values;
    std::vector<double> vectors;
    SymmetricEigen(l, std::vector<double>(h.begin(), h.end()), &values, &vectors);
    const int64_t cap = max_width > 0 ? std::min(max_width, l) : l;
    int64_t width = 0;
    while (width < cap && values[static_cast<size_t>(width)] > 0.0 &&
           values[static_cast<size_t>(width)] >= kReplicatedBasisRelTol * values[0])
        ++width;
    if (width == 0)
        return 0;
    // Direction j = W r_j / sqrt(lambda_j): d x width, row-major for OrthonormalizeColumns.
    std::vector<double> v(static_cast<size_t>(d * width));
    for (int64_t t = 0; t < d; ++t)
    {
        for (int64_t j = 0; j < width; ++j)
        {
            double acc = 0.0;
            for (int64_t k = 0; k < l; ++k)
                acc += static_cast<double>(w[static_cast<size_t>(t * l + k)]) *
                       vectors[static_cast<size_t>(k * l + j)];
            v[static_cast<size_t>(t * width + j)] = acc / std::sqrt(values[static_cast<size_t>(j)]);
        }
    }
    OrthonormalizeColumns(d, width, &v);
    for (int64_t j = 0; j < width; ++j)
        for (int64_t t = 0; t < d; ++t)
            out[j * d + t] = static_cast<float>(v[static_cast<size_t>(t * width + j)]);
    return width;
}

} // namespace

ReplicatedBasis
DeriveReplicatedBasis(const AdapterLayout& layout, const std::vector<float>& first_moment,
                      int64_t max_width, SketchIsa isa, const std::vector<uint8_t>* wanted)
{
    const size_t n = layout.size();
    // Room for each matrix's widest basis, so that every matrix writes its own slot in place.
    ReplicatedBasis out;
    out.width.assign(n, 0);
    out.at.resize(n);
    int64_t total = 0;
    for (size_t i = 0; i < n; ++i)
    {
        const MatrixSpec& s = layout.matrix(i);
        out.at[i] = total;
        if (wanted == nullptr || (*wanted)[i] != 0)
            total += std::min(std::min(s.rows, s.cols), kSketchKernelMaxWidth) *
                     std::max(s.rows, s.cols);
    }
    out.vectors.resize(static_cast<size_t>(total));
    ParallelFor(0, static_cast<int64_t>(n), 1,
                [&](int64_t b, int64_t e)
                {
                    for (int64_t t = b; t < e; ++t)
                    {
                        const size_t i = static_cast<size_t>(t);
                        if (wanted != nullptr && (*wanted)[i] == 0)
                            continue;
                        const MatrixSpec& s = layout.matrix(i);
                        out.width[i] =
                            DeriveOne(first_moment.data() + layout.offset(i), s.rows, s.cols,
                                      max_width, isa, out.vectors.data() + out.at[i]);
                    }
                });
    return out;
}

BasisProjection
ProjectOntoBasis(const AdapterLayout& layout, const ReplicatedBasis& basis,
                 const std::vector<float>& x, std::vector<float>* residual)
{
    const size_t n = layout.size();
    BasisProjection p;
    p.at.resize(n);
    p.gain_at.resize(n);
    int64_t coeffs = 0;
    int64_t gains = 0;
    for (size_t i = 0; i < n; ++i)
    {
        const MatrixSpec& s = layout.matrix(i);
        p.at[i] = coeffs;
        p.gain_at[i] = gains;
        coeffs += basis.width[i] * std::min(s.rows, s.cols);
        gains += basis.width[i];
    }
    p.coeffs.assign(static_cast<size_t>(coeffs), 0.0f);
    p.gains.assign(static_cast<size_t>(gains), 0.0);
    *residual = x;
    // One matrix per task, BLAS held at one thread: a matrix's products do not depend on the
    // thread that made them (this host's BLAS; the payload, not this, is what replicas share).
    SingleThreadedBlas one_blas_thread;
    ParallelFor(0, static_cast<int64_t>(n), 1,
                [&](int64_t b, int64_t e)
                {
                    for (int64_t t = b; t < e; ++t)
                    {
                        const size_t i = static_cast<size_t>(t);
                        const int64_t width = basis.width[i];
                        if (width == 0)
                            continue;
                        const MatrixSpec& s = layout.matrix(i);
                        const int64_t m = std::min(s.rows, s.cols);
                        const int64_t d = std::max(s.rows, s.cols);
                        at::Tensor xi = at::from_blob(residual->data() + layout.offset(i),
                                                      {s.rows, s.cols}, at::kFloat);
                        at::Tensor xs = s.rows <= s.cols ? xi : xi.t(); // m x d view
                        at::Tensor v =
                            at::from_blob(const_cast<float*>(basis.vectors.data()) + basis.at[i],
                                          {width, d}, at::kFloat);
                        const at::Tensor ct = at::mm(v, xs.t()).contiguous(); // width x m
                        xs.sub_(at::mm(ct.t(), v));
                        const float* c = ct.data_ptr<float>();
                        std::copy(c, c + width * m, p.coeffs.data() + p.at[i]);
                        for (int64_t j = 0; j < width; ++j)
                        {
                            double energy = 0.0;
                            for (int64_t a = 0; a < m; ++a)
                                energy += static_cast<double>(c[j * m + a]) * c[j * m + a];
                            p.gains[static_cast<size_t>(p.gain_at[i] + j)] = energy;
                        }
                    }
                });
    return p;
}

} // namespace hilo
