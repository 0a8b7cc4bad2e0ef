// Shared fixtures for the compressor tests: small LoRA-shaped layouts and synthetic gradients with
// known spectra. Header-only; every generator takes an explicit seed.
#ifndef HILO_TESTS_HILO_COMPRESS_TEST_UTIL_H
#define HILO_TESTS_HILO_COMPRESS_TEST_UTIL_H

#include "hilo/compress/compressor-factory.h"
#include "hilo/core/adapter-layout.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace hilo::testing
{

/// A LoRA-shaped layout: `layers` x {q, v, down} with rank r, hidden d, ffn f (A: r x d_in, B:
/// d_out x r).
inline AdapterLayout
LoraLayout(int layers = 2, int64_t r = 8, int64_t d = 48, int64_t f = 96)
{
    std::vector<MatrixSpec> specs;
    struct Mod
    {
        const char* name;
        int64_t in, out;
    };
    const Mod mods[] = {{"q", d, d}, {"v", d, d / 4}, {"down", f, d}};
    for (int l = 0; l < layers; ++l)
    {
        for (const Mod& m : mods)
        {
            const std::string p = "layers." + std::to_string(l) + "." + m.name;
            specs.push_back({p + ".lora_A", r, m.in});
            specs.push_back({p + ".lora_B", m.out, r});
        }
    }
    return *AdapterLayout::Create(specs);
}

/// Orthonormal columns (n x k, k <= n) from a seeded Gaussian, in double.
inline at::Tensor
RandomOrthonormal(int64_t n, int64_t k, uint64_t seed)
{
    std::mt19937_64 gen(seed);
    std::normal_distribution<double> normal;
    at::Tensor g = at::empty({n, k}, at::kDouble);
    double* p = g.data_ptr<double>();
    for (int64_t i = 0; i < n * k; ++i)
        p[i] = normal(gen);
    return std::get<0>(at::linalg_qr(g, "reduced"));
}

/// Writes U diag(sigma) V^T (+ Gaussian noise of std `noise`) for every matrix of `layout` into a
/// flat buffer; matrix i gets sigma_j = scale_i * (j + 1)^-alpha_i with scale and alpha drawn per
/// matrix, j < min(rows, cols).
inline std::vector<float>
SpectralGradient(const AdapterLayout& layout, uint64_t seed, double noise = 0.0,
                 double alpha_min = 0.5, double alpha_max = 2.0)
{
    std::vector<float> x(static_cast<size_t>(layout.numel()));
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> unif(0.0, 1.0);
    std::normal_distribution<double> normal;
    for (size_t i = 0; i < layout.size(); ++i)
    {
        const MatrixSpec& s = layout.matrix(i);
        const int64_t m = std::min(s.rows, s.cols);
        const double alpha = alpha_min + (alpha_max - alpha_min) * unif(gen);
        const double scale = std::pow(10.0, 2.0 * unif(gen) - 1.0);
        at::Tensor u = RandomOrthonormal(s.rows, m, gen());
        at::Tensor v = RandomOrthonormal(s.cols, m, gen());
        at::Tensor sig = at::empty({m}, at::kDouble);
        for (int64_t j = 0; j < m; ++j)
            sig[j] = scale * std::pow(static_cast<double>(j + 1), -alpha);
        at::Tensor xi = at::mm(u * sig.unsqueeze(0), v.t()).to(at::kFloat).contiguous();
        const float* p = xi.data_ptr<float>();
        float* o = x.data() + layout.offset(i);
        for (int64_t t = 0; t < s.numel(); ++t)
            o[t] = p[t] + static_cast<float>(noise * normal(gen));
    }
    return x;
}

inline std::vector<float>
GaussianVector(int64_t n, uint64_t seed, double std = 1.0)
{
    std::mt19937_64 gen(seed);
    std::normal_distribution<double> normal(0.0, std);
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x)
        v = static_cast<float>(normal(gen));
    return x;
}

/// ||a - b|| / ||b|| in double.
inline double
RelativeError(const std::vector<float>& approx, const std::vector<float>& exact)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < exact.size(); ++i)
    {
        const double d = static_cast<double>(approx[i]) - exact[i];
        num += d * d;
        den += static_cast<double>(exact[i]) * exact[i];
    }
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

inline std::unique_ptr<Compressor>
MakeCompressor(const std::string& kind, const AdapterLayout& layout, const std::string& options)
{
    StatusOr<CompressorOptions> opts = ParseCompressorOptions(options);
    EXPECT_TRUE(opts.ok()) << opts.status().ToString();
    StatusOr<std::unique_ptr<Compressor>> c = NewCompressor(kind, layout, *opts);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
}

/// Bitwise equality of two float buffers (NaN-safe, distinguishes -0 and +0).
inline bool
BitIdentical(const std::vector<float>& a, const std::vector<float>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

} // namespace hilo::testing

#endif // HILO_TESTS_HILO_COMPRESS_TEST_UTIL_H
