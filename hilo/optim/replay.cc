// Compiled with -ffp-contract=off (CMakeLists.txt). Do not reorder the arithmetic: the exact
// sequence of roundings is the contract between learner and replicas.
#include "hilo/optim/replay.h"

#include "hilo/core/finite.h"
#include "hilo/core/parallel.h"

#include <atomic>
#include <cmath>

namespace hilo
{
namespace
{

// Elements per task. Large enough that thread start-up is amortised, small enough that two cores
// share a 64x4096 matrix.
constexpr int64_t kGrain = 1 << 15;

struct AdamWScalars
{
    float lr;
    float decay; // 1 - lr * weight_decay
    float beta1;
    float beta2;
    float one_minus_beta1;
    float one_minus_beta2;
    float bias1; // 1 - beta1^t
    float bias2; // 1 - beta2^t
    float eps;
};

// One AdamW element, in the fixed order of roundings both sides run. Kept in one inline function
// so the in-place and out-of-place loops below cannot drift apart. kFrozenV: the second moment
// frozen (OptimizerConfig::v_freeze_step): a coordinate whose v is already positive keeps it; one
// whose v is still 0 (no decoded gradient has reached it yet) takes the usual update and keeps
// what it gets from then on; `s.bias2` is then the frozen step's. Without it, plain AdamW.
template<bool kFrozenV>
inline uint32_t
AdamWElement(const AdamWScalars& s, float gi, float theta, float m_in, float v_in, float* theta_out,
             float* m_out, float* v_out)
{
    float p = theta * s.decay;
    const float m = s.beta1 * m_in + s.one_minus_beta1 * gi;
    const float gg = gi * gi;
    const float v_new = s.beta2 * v_in + s.one_minus_beta2 * gg;
    const float v = kFrozenV && v_in > 0.0f ? v_in : v_new;
    const float m_hat = m / s.bias1;
    const float v_hat = v / s.bias2;
    const float denom = std::sqrt(v_hat) + s.eps;
    const float delta = s.lr * (m_hat / denom);
    p = p - delta;
    *theta_out = p;
    *m_out = m;
    *v_out = v;
    return NonFiniteBits(p) | NonFiniteBits(m) | NonFiniteBits(v);
}

// One streaming pass: reads g, theta, m, v once and writes theta, m, v once, and reports whether
// any written value is not finite (a compare per value on data already in registers). The scalars
// are a by-value copy and every array is __restrict, so the compiler needs no alias checks and
// vectorizes the loop (sqrt included: the library builds with -fno-math-errno, see
// hilo/CMakeLists.txt; sqrtps and sqrtss round identically, so vector and scalar tails agree).
// noinline: GCC drops __restrict when it inlines the function into the parallel lambda, and the
// seven streams of the out-of-place loop exceed its runtime alias-check limit, which left that
// loop scalar.
#define HILO_CHUNK_KERNEL __attribute__((noinline))

template<bool kFrozenV>
HILO_CHUNK_KERNEL bool
AdamWInPlace(const AdamWScalars s, const float* __restrict g, float* __restrict theta,
             float* __restrict m, float* __restrict v, int64_t begin, int64_t end)
{
    uint32_t acc = 0;
    for (int64_t i = begin; i < end; ++i)
    {
        acc |= AdamWElement<kFrozenV>(s, g[i], theta[i], m[i], v[i], &theta[i], &m[i], &v[i]);
    }
    return NonFiniteSeen(acc);
}

template<bool kFrozenV>
HILO_CHUNK_KERNEL bool
AdamWOutOfPlace(const AdamWScalars s, const float* __restrict g, const float* __restrict theta_in,
                const float* __restrict m_in, const float* __restrict v_in,
                float* __restrict theta_out, float* __restrict m_out, float* __restrict v_out,
                int64_t begin, int64_t end)
{
    uint32_t acc = 0;
    for (int64_t i = begin; i < end; ++i)
    {
        acc |= AdamWElement<kFrozenV>(s, g[i], theta_in[i], m_in[i], v_in[i], &theta_out[i],
                                      &m_out[i], &v_out[i]);
    }
    return NonFiniteSeen(acc);
}

// Returns true when every written value is finite.
bool
AdamWKernel(const AdamWScalars& s, bool v_frozen, const float* theta_in, const float* m_in,
            const float* v_in, const float* g, float* theta_out, float* m_out, float* v_out,
            int64_t n)
{
    std::atomic<bool> bad{false};
    if (theta_out == theta_in)
    {
        ParallelFor(0, n, kGrain,
                    [&](int64_t begin, int64_t end)
                    {
                        if (v_frozen
                                ? AdamWInPlace<true>(s, g, theta_out, m_out, v_out, begin, end)
                                : AdamWInPlace<false>(s, g, theta_out, m_out, v_out, begin, end))
                            bad.store(true, std::memory_order_relaxed);
                    });
        return !bad.load();
    }
    ParallelFor(0, n, kGrain,
                [&](int64_t begin, int64_t end)
                {
                    if (v_frozen ? AdamWOutOfPlace<true>(s, g, theta_in, m_in, v_in, theta_out,
                                                         m_out, v_out, begin, end)
                                 : AdamWOutOfPlace<false>(s, g, theta_in, m_in, v_in, theta_out,
                                                          m_out, v_out, begin, end))
                        bad.store(true, std::memory_order_relaxed);
                });
    return !bad.load();
}

struct SgdScalars
{
    float lr;
    float wd;
    float momentum;
    float one_minus_dampening;
    bool first; // step 1: the buffer is the gradient itself
};

inline uint32_t
SgdElement(const SgdScalars& s, float gi, float p, float m_in, float* theta_out, float* m_out)
{
    const float wdp = s.wd * p;
    const float d = gi + wdp;
    float buf;
    if (s.first)
    {
        buf = d;
    }
    else
    {
        const float kept = s.momentum * m_in;
        const float added = s.one_minus_dampening * d;
        buf = kept + added;
    }
    const float step = s.lr * buf;
    const float p_out = p - step;
    *theta_out = p_out;
    *m_out = buf;
    return NonFiniteBits(p_out) | NonFiniteBits(buf);
}

HILO_CHUNK_KERNEL bool
SgdInPlace(const SgdScalars s, const float* __restrict g, float* __restrict theta,
           float* __restrict m, int64_t begin, int64_t end)
{
    uint32_t acc = 0;
    for (int64_t i = begin; i < end; ++i)
    {
        acc |= SgdElement(s, g[i], theta[i], m[i], &theta[i], &m[i]);
    }
    return NonFiniteSeen(acc);
}

HILO_CHUNK_KERNEL bool
SgdOutOfPlace(const SgdScalars s, const float* __restrict g, const float* __restrict theta_in,
              const float* __restrict m_in, float* __restrict theta_out, float* __restrict m_out,
              int64_t begin, int64_t end)
{
    uint32_t acc = 0;
    for (int64_t i = begin; i < end; ++i)
    {
        acc |= SgdElement(s, g[i], theta_in[i], m_in[i], &theta_out[i], &m_out[i]);
    }
    return NonFiniteSeen(acc);
}

// Returns true when every written value is finite.
bool
SgdKernel(const SgdScalars& s, const float* theta_in, const float* m_in, const float* g,
          float* theta_out, float* m_out, int64_t n)
{
    std::atomic<bool> bad{false};
    if (theta_out == theta_in)
    {
        ParallelFor(0, n, kGrain,
                    [&](int64_t begin, int64_t end)
                    {
                        if (SgdInPlace(s, g, theta_out, m_out, begin, end))
                            bad.store(true, std::memory_order_relaxed);
                    });
        return !bad.load();
    }
    ParallelFor(0, n, kGrain,
                [&](int64_t begin, int64_t end)
                {
                    if (SgdOutOfPlace(s, g, theta_in, m_in, theta_out, m_out, begin, end))
                        bad.store(true, std::memory_order_relaxed);
                });
    return !bad.load();
}

} // namespace

OptimizerState
NewOptimizerState(const OptimizerConfig& config, int64_t numel)
{
    OptimizerState s;
    s.m.assign(static_cast<size_t>(numel), 0.0f);
    if (config.UsesSecondMoment())
    {
        s.v.assign(static_cast<size_t>(numel), 0.0f);
    }
    return s;
}

Status
CheckOptimizerState(const OptimizerConfig& config, const OptimizerState& state, int64_t numel)
{
    const size_t n = static_cast<size_t>(numel);
    if (state.m.size() != n)
    {
        return Status::InvalidArgument("optimizer state has " + std::to_string(state.m.size()) +
                                       " first-moment values; the layout has " + std::to_string(n) +
                                       " parameters");
    }
    const size_t want_v = config.UsesSecondMoment() ? n : 0;
    if (state.v.size() != want_v)
    {
        return Status::InvalidArgument("optimizer state has " + std::to_string(state.v.size()) +
                                       " second-moment values; expected " + std::to_string(want_v));
    }
    return Status::Ok();
}

Status
ReplayStep(const OptimizerConfig& config, const ReplicatedState& in, const std::vector<float>& grad,
           ReplicatedState* out)
{
    const int64_t n = static_cast<int64_t>(grad.size());
    const OptimizerState& oin = in.optimizer;
    OptimizerState& oout = out->optimizer;
    // Scalars first: `out` may alias `in`.
    const uint64_t step = oin.step + 1;
    const float beta1_prod = oin.beta1_prod * config.beta1;
    // Frozen second moment (v_freeze_step): past step N, beta2^t stays at step N's, and so does
    // every coordinate's v that is positive by then (AdamWElement<true>).
    const bool v_frozen =
        config.v_freeze_step > 0 && step > static_cast<uint64_t>(config.v_freeze_step);
    const float beta2_prod = v_frozen ? oin.beta2_prod : oin.beta2_prod * config.beta2;
    const float lr = LearningRate(config.lr, step);

    if (&out->adapter.theta != &in.adapter.theta)
    {
        out->adapter.theta.resize(grad.size());
        oout.m.resize(oin.m.size());
        oout.v.resize(oin.v.size());
    }

    bool finite = true;
    if (config.kind == OptimizerKind::kAdamW)
    {
        AdamWScalars s;
        s.lr = lr;
        const float lr_wd = lr * config.weight_decay;
        s.decay = 1.0f - lr_wd;
        s.beta1 = config.beta1;
        s.beta2 = config.beta2;
        s.one_minus_beta1 = 1.0f - config.beta1;
        s.one_minus_beta2 = 1.0f - config.beta2;
        s.bias1 = 1.0f - beta1_prod;
        s.bias2 = 1.0f - beta2_prod;
        s.eps = config.eps;
        finite =
            AdamWKernel(s, v_frozen, in.adapter.theta.data(), oin.m.data(), oin.v.data(),
                        grad.data(), out->adapter.theta.data(), oout.m.data(), oout.v.data(), n);
    }
    else
    {
        SgdScalars s;
        s.lr = lr;
        s.wd = config.weight_decay;
        s.momentum = config.momentum;
        s.one_minus_dampening = 1.0f - config.dampening;
        s.first = oin.step == 0;
        finite = SgdKernel(s, in.adapter.theta.data(), oin.m.data(), grad.data(),
                           out->adapter.theta.data(), oout.m.data(), n);
    }
    oout.step = step;
    oout.beta1_prod = beta1_prod;
    oout.beta2_prod = beta2_prod;
    if (!finite)
    {
        return Status::Corruption("optimizer step " + std::to_string(step) +
                                  " produced a non-finite parameter or moment (gradient too large "
                                  "or not finite)");
    }
    return Status::Ok();
}

} // namespace hilo
