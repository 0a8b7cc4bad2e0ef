// The 7B-rank-64-shaped adapter and its synthetic gradient, shared by hilo-compress-bench,
// hilo-compress-error and hilo-spectra-bench (header-only; the bench glob builds only *.cc).
//
// Layout: Qwen2.5-7B-like, 28 layers, hidden 3584, FFN 18944, KV width 512, LoRA r = 64 on q, k,
// v, o, gate, up, down: 392 matrices, 161,480,704 parameters (A: 64 x d_in, B: d_out x 64).
//
// Gradient of matrix i: X_i = U diag(sigma) V^T + N with
//   sigma_j = s_i * j^-alpha_i, j = 1..64, alpha_i ~ U[0.5, 2.0], s_i log-uniform in [0.1, 10]
//   (matrices differ in scale by up to 100x and in spectral decay, as LoRA factor gradients do);
//   the 64-side factor is orthonormal (QR of a Gaussian), the long side has Gaussian columns
//   scaled by 1/sqrt(d) (orthonormal up to ~1/sqrt(d) coherence: d >= 512);
//   N iid Gaussian with ||N||_F = 0.05 ||U diag(sigma) V^T||_F (a full-rank noise floor).
// Everything is seeded; the same seed gives the same gradient.
#ifndef HILO_TESTS_BENCH_HILO_COMPRESS_FIXTURE_H
#define HILO_TESTS_BENCH_HILO_COMPRESS_FIXTURE_H

#include "hilo/core/adapter-layout.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <sys/resource.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace hilo::bench
{

/// CPU seconds used by every thread of this process so far: on a shared machine, the work an
/// operation costs, whatever else was running (wall time is reported next to it).
inline double
ProcessCpuSeconds()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

inline AdapterLayout
Qwen7BLoraLayout(int64_t rank = 64)
{
    const int64_t hidden = 3584, ffn = 18944, kv = 512;
    struct Mod
    {
        const char* name;
        int64_t in, out;
    };
    const Mod mods[] = {{"q", hidden, hidden}, {"k", hidden, kv},     {"v", hidden, kv},
                        {"o", hidden, hidden}, {"gate", hidden, ffn}, {"up", hidden, ffn},
                        {"down", ffn, hidden}};
    std::vector<MatrixSpec> specs;
    for (int l = 0; l < 28; ++l)
    {
        for (const Mod& m : mods)
        {
            const std::string p = "layers." + std::to_string(l) + "." + m.name;
            specs.push_back({p + ".lora_A", rank, m.in});
            specs.push_back({p + ".lora_B", m.out, rank});
        }
    }
    return AdapterLayout::Create(specs).value();
}

inline std::vector<float>
SyntheticLoraGradient(const AdapterLayout& layout, uint64_t seed, double noise_ratio = 0.05)
{
    std::vector<float> x(static_cast<size_t>(layout.numel()));
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> unif(0.0, 1.0);
    at::Generator tg = at::detail::createCPUGenerator(seed);
    for (size_t i = 0; i < layout.size(); ++i)
    {
        const MatrixSpec& s = layout.matrix(i);
        const int64_t m = std::min(s.rows, s.cols);
        const int64_t d = std::max(s.rows, s.cols);
        const double alpha = 0.5 + 1.5 * unif(gen);
        const double scale = std::pow(10.0, 2.0 * unif(gen) - 1.0);
        at::Tensor sig = at::empty({m}, at::kFloat);
        for (int64_t j = 0; j < m; ++j)
            sig[j] = static_cast<float>(scale * std::pow(static_cast<double>(j + 1), -alpha));
        at::Tensor small = std::get<0>(at::linalg_qr(at::randn({m, m}, tg), "reduced"));
        at::Tensor big = at::randn({d, m}, tg) / std::sqrt(static_cast<double>(d));
        at::Tensor signal = s.rows <= s.cols ? at::mm(small * sig.unsqueeze(0), big.t())
                                             : at::mm(big * sig.unsqueeze(0), small.t());
        const double sn = signal.norm().item<double>();
        at::Tensor noise = at::randn({s.rows, s.cols}, tg);
        noise.mul_(noise_ratio * sn / noise.norm().item<double>());
        at::Tensor xi = (signal + noise).contiguous();
        std::memcpy(x.data() + layout.offset(i), xi.data_ptr<float>(),
                    static_cast<size_t>(s.numel()) * sizeof(float));
    }
    return x;
}

/// ||approx - exact|| / ||exact||, double accumulation.
inline double
RelativeL2Error(const std::vector<float>& approx, const std::vector<float>& exact)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < exact.size(); ++i)
    {
        const double d = static_cast<double>(approx[i]) - exact[i];
        num += d * d;
        den += static_cast<double>(exact[i]) * exact[i];
    }
    return std::sqrt(num / den);
}

/// The compressor arms of the report: kind, options, label.
struct Arm
{
    const char* kind;
    const char* options;
    const char* label;
};

inline const std::vector<Arm>&
ReportArms()
{
    static const std::vector<Arm> arms = {
        {"spar", "dtype=bf16", "spar"},
        {"spar", "allocation=uniform;dtype=bf16", "spar-uniform"},
        {"spar", "dtype=int8", "spar-int8"},
        {"powersgd", "dtype=bf16", "powersgd"},
        {"topk", "dtype=bf16", "topk"},
        {"topk", "dtype=bf16;scope=per_matrix", "topk-per-matrix"},
        {"randk", "dtype=bf16", "randk"},
        {"quant", "levels=1;scheme=qsgd", "quant-qsgd-s1"},
        {"quant", "scheme=int8", "quant-int8"},
        {"spar", "dtype=bf16;sketch=8", "spar-sketch8"},
        {"sparq", "bits=4", "sparq"},
        {"spar", "dtype=bf16;sketch=16", "spar-sketch16"},
        {"spar", "dtype=bf16;screen=true;sketch=8", "spar-screen8"},
        {"spar", "dtype=bf16;screen=true;sketch=16", "spar-screen16"},
        {"spar", "dtype=bf16;sketch=8;warm=true", "spar-warm8"},
        {"spar", "dtype=bf16;sketch=4;warm=true", "spar-warm4"},
        {"spar", "dtype=bf16;sketch=0", "spar-exact"},
        {"sparq", "bits=4;sketch=8;warm=true", "sparq-warm8"},
        {"sparq", "bits=4;sketch=0", "sparq-exact"},
        {"spar", "dtype=bf16;sketch=16;warm=true", "spar-warm16"},
        {"sparq", "bits=4;sketch=16;warm=true", "sparq-warm16"},
    };
    return arms;
}

} // namespace hilo::bench

#endif // HILO_TESTS_BENCH_HILO_COMPRESS_FIXTURE_H
