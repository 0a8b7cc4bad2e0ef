#include "hilo/compress/powersgd.h"

#include "hilo/compress/blas-hooks.h"
#include "hilo/compress/factor-coding.h"
#include "hilo/core/coding.h"
#include "hilo/core/finite.h"
#include "hilo/core/parallel.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace hilo
{
namespace
{

/// Modified Gram-Schmidt on the columns of the row-major rows x k fp32 matrix `p`, in double (the
/// reference implementation orthogonalizes the same way). A column that vanishes against the
/// earlier ones becomes zero; M^T P then makes its reconstruction term zero as well. Returns the
/// indices of the columns that vanished. Cost 2 rows k^2: negligible next to the products with M,
/// and far cheaper here than LAPACK's QR, which spends its time in BLAS thread hand-offs on such
/// skinny panels.
std::vector<int64_t>
Orthonormalize(at::Tensor* p)
{
    std::vector<int64_t> vanished;
    const int64_t rows = p->size(0);
    const int64_t k = p->size(1);
    at::Tensor cols = p->t().to(at::kDouble).contiguous(); // k x rows
    double* c = cols.data_ptr<double>();
    for (int64_t j = 0; j < k; ++j)
    {
        double* cj = c + j * rows;
        for (int64_t i = 0; i < j; ++i)
        {
            const double* ci = c + i * rows;
            double dot = 0.0;
            for (int64_t t = 0; t < rows; ++t)
                dot += ci[t] * cj[t];
            for (int64_t t = 0; t < rows; ++t)
                cj[t] -= dot * ci[t];
        }
        double norm2 = 0.0;
        for (int64_t t = 0; t < rows; ++t)
            norm2 += cj[t] * cj[t];
        const double norm = std::sqrt(norm2);
        const double inv = norm > 1e-30 ? 1.0 / norm : 0.0;
        if (inv == 0.0)
            vanished.push_back(j);
        for (int64_t t = 0; t < rows; ++t)
            cj[t] *= inv;
    }
    *p = cols.t().to(at::kFloat).contiguous();
    return vanished;
}

class PowerSgdCompressor : public Compressor
{
  public:
    PowerSgdCompressor(const AdapterLayout& layout, ValueDtype dtype, int64_t max_rank,
                       uint64_t seed, bool error_feedback)
      : m_layout(layout)
      , m_dtype(dtype)
      , m_max_rank(max_rank)
      , m_seed(seed)
      , m_error_feedback(error_feedback)
      , m_q(layout.size())
      , m_q_draws(layout.size(), 0)
    {
        for (const MatrixSpec& s : layout.matrices())
        {
            m_full_rank = std::max(m_full_rank, std::min(s.rows, s.cols));
        }
        if (m_max_rank > 0)
        {
            m_full_rank = std::min(m_full_rank, m_max_rank);
        }
    }

    std::string Name() const override { return "powersgd-v1"; }
    std::string Params() const override
    {
        return FormatCompressorOptions({{"dtype", ValueDtypeName(m_dtype)},
                                        {"error_feedback", m_error_feedback ? "true" : "false"},
                                        {"max_rank", std::to_string(m_max_rank)},
                                        {"seed", std::to_string(m_seed)}});
    }
    const AdapterLayout& layout() const override { return m_layout; }
    int64_t MinPayloadBytes() const override { return PayloadBytes(1); }

    StatusOr<Encoded> Encode(const std::vector<float>& x, int64_t budget_bytes) override;
    Status Decode(std::string_view payload, std::vector<float>* out) const override;
    std::string SaveLocalState() const override;
    Status RestoreLocalState(std::string_view state) override;

  private:
    /// One power iteration on matrix i at rank min(k, rows, cols), updating its warm start, and
    /// its coded factors appended to `out`. Returns the rank, or -1 when M Q holds a non-finite
    /// value (nothing is then written or updated beyond the warm start's first draw).
    int64_t EncodeMatrix(const std::vector<float>& x, size_t i, int64_t k, std::string* out);
    int64_t PayloadBytes(int64_t k) const
    {
        int64_t total = 1 + VarintLength(m_layout.size()) + VarintLength(static_cast<uint64_t>(k));
        for (const MatrixSpec& s : m_layout.matrices())
        {
            total += std::min({k, s.rows, s.cols}) *
                     (CodedVectorBytes(s.rows, m_dtype) + CodedVectorBytes(s.cols, m_dtype));
        }
        return total;
    }
    /// A cols x k N(0, 1) matrix for matrix i; `draw` counts the draws made for that matrix (0
    /// the first time), so every draw is a pure function of (seed, i, draw).
    at::Tensor RandomQ(size_t i, uint64_t draw, int64_t cols, int64_t k) const
    {
        std::mt19937_64 gen(m_seed * 0x9e3779b97f4a7c15ULL + i + draw * 0xd1b54a32d192ed03ULL);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        at::Tensor q = at::empty({cols, k}, at::kFloat);
        float* p = q.data_ptr<float>();
        for (int64_t t = 0; t < cols * k; ++t)
        {
            p[t] = normal(gen);
        }
        return q;
    }

    AdapterLayout m_layout;
    ValueDtype m_dtype;
    int64_t m_max_rank;
    uint64_t m_seed;
    bool m_error_feedback;
    int64_t m_full_rank{0};
    std::vector<at::Tensor> m_q;     // learner-local warm start, cols_i x k_i
    std::vector<uint64_t> m_q_draws; // learner-local: random draws made for each m_q[i]
    std::vector<float> m_residual;   // learner-local error feedback (error_feedback=true)
    std::vector<float> m_corrected;  // scratch: x + residual
    std::vector<float> m_decoded;    // scratch: M_hat
};

int64_t
PowerSgdCompressor::EncodeMatrix(const std::vector<float>& x, size_t i, int64_t k, std::string* out)
{
    const MatrixSpec& s = m_layout.matrix(i);
    const int64_t ki = std::min({k, s.rows, s.cols});
    at::Tensor mi = at::from_blob(const_cast<float*>(x.data()) + m_layout.offset(i),
                                  {s.rows, s.cols}, at::kFloat);
    at::Tensor& q = m_q[i];
    if (!q.defined() || q.size(1) != ki)
    {
        q = RandomQ(i, m_q_draws[i]++, s.cols, ki);
    }
    at::Tensor p = at::mm(mi, q);
    const float* pp = p.data_ptr<float>();
    for (int64_t t = 0; t < p.numel(); ++t)
    {
        if (!std::isfinite(pp[t]))
            return -1;
    }
    const std::vector<int64_t> vanished = Orthonormalize(&p);
    q = at::mm(mi.t(), p).contiguous();
    if (!vanished.empty())
    {
        // A direction M did not reach (all of M is zero: LoRA's A factors while B is still zero)
        // would stay zero in every later warm start, M Q = 0, and the matrix would never be sent
        // again. Restart those columns from fresh random ones.
        at::Tensor fresh = RandomQ(i, m_q_draws[i]++, s.cols, ki);
        for (int64_t j : vanished)
        {
            q.select(1, j).copy_(fresh.select(1, j));
        }
    }
    at::Tensor pt = p.t().contiguous();
    at::Tensor qt = q.t().contiguous();
    out->reserve(static_cast<size_t>(
        ki * (CodedVectorBytes(s.rows, m_dtype) + CodedVectorBytes(s.cols, m_dtype))));
    ByteWriter w(out);
    for (int64_t j = 0; j < ki; ++j)
    {
        PutCodedVector(&w, pt.data_ptr<float>() + j * s.rows, s.rows, m_dtype);
        PutCodedVector(&w, qt.data_ptr<float>() + j * s.cols, s.cols, m_dtype);
    }
    return ki;
}

StatusOr<Encoded>
PowerSgdCompressor::Encode(const std::vector<float>& x_in, int64_t budget_bytes)
{
    if (static_cast<int64_t>(x_in.size()) != m_layout.numel())
    {
        return Status::InvalidArgument("powersgd: input has " + std::to_string(x_in.size()) +
                                       " values, layout has " + std::to_string(m_layout.numel()));
    }
    if (budget_bytes < MinPayloadBytes())
    {
        return Status::BudgetTooSmall("powersgd: budget " + std::to_string(budget_bytes) +
                                      " bytes is below the smallest payload (" +
                                      std::to_string(MinPayloadBytes()) + " bytes, rank 1)");
    }
    const std::vector<float>* xp = &x_in;
    if (m_error_feedback)
    {
        m_residual.resize(x_in.size(), 0.0f);
        m_corrected.resize(x_in.size());
        for (size_t t = 0; t < x_in.size(); ++t)
        {
            m_corrected[t] = x_in[t] + m_residual[t];
        }
        xp = &m_corrected;
    }
    const std::vector<float>& x = *xp;
    int64_t k = 1;
    while (k < m_full_rank && PayloadBytes(k + 1) <= budget_bytes)
    {
        ++k;
    }

    Encoded e;
    e.kept_per_matrix.resize(m_layout.size());
    // One matrix per intra-op task, with BLAS on that thread alone (blas-hooks.h); each task
    // touches only its own warm start and draw counter, and codes its factors into a buffer of
    // its own, concatenated in layout order below. A matrix's result does not depend on which
    // thread ran it.
    std::vector<std::string> coded(m_layout.size());
    std::vector<char> finite(m_layout.size(), 1);
    try
    {
        SingleThreadedBlas one_blas_thread;
        ParallelFor(0, static_cast<int64_t>(m_layout.size()), 1,
                    [&](int64_t b, int64_t end)
                    {
                        for (int64_t t = b; t < end; ++t)
                        {
                            const size_t i = static_cast<size_t>(t);
                            const int64_t ki = EncodeMatrix(x, i, k, &coded[i]);
                            finite[i] = ki >= 0;
                            e.kept_per_matrix[i] = ki;
                        }
                    });
    }
    catch (const std::exception& ex)
    {
        return Status::Internal(std::string("powersgd: LibTorch failed during encode: ") +
                                ex.what());
    }
    for (char f : finite)
    {
        if (!f)
            return Status::InvalidArgument("powersgd: the input holds non-finite values");
    }
    e.payload.reserve(static_cast<size_t>(PayloadBytes(k)));
    ByteWriter w(&e.payload);
    w.PutU8(static_cast<uint8_t>(m_dtype));
    w.PutVarint(m_layout.size());
    w.PutVarint(static_cast<uint64_t>(k));
    for (const std::string& c : coded)
    {
        w.PutBytes(c.data(), c.size());
    }
    if (m_error_feedback)
    {
        HILO_RETURN_IF_ERROR(Decode(e.payload, &m_decoded));
        for (size_t t = 0; t < x.size(); ++t)
        {
            m_residual[t] = x[t] - m_decoded[t];
        }
    }
    return e;
}

// Local state: u32 matrices; per matrix u64 random draws made so far (RandomQ's counter), u64
// rows, u64 cols of its warm start Q (0 x 0 before the first Encode) and rows x cols fp32; then
// u64 n and the n fp32 values of the residual.
std::string
PowerSgdCompressor::SaveLocalState() const
{
    std::string out;
    ByteWriter w(&out);
    w.PutU32(static_cast<uint32_t>(m_q.size()));
    for (size_t i = 0; i < m_q.size(); ++i)
    {
        const at::Tensor& q = m_q[i];
        w.PutU64(m_q_draws[i]);
        const bool set = q.defined();
        w.PutU64(set ? static_cast<uint64_t>(q.size(0)) : 0);
        w.PutU64(set ? static_cast<uint64_t>(q.size(1)) : 0);
        if (set)
        {
            const at::Tensor c = q.contiguous();
            w.PutFloats(c.data_ptr<float>(), static_cast<size_t>(c.numel()), ValueDtype::kFp32);
        }
    }
    w.PutU64(m_residual.size());
    w.PutFloats(m_residual.data(), m_residual.size(), ValueDtype::kFp32);
    return out;
}

Status
PowerSgdCompressor::RestoreLocalState(std::string_view state)
{
    ByteReader r(state);
    uint32_t n = 0;
    if (!r.GetU32(&n) || n != m_layout.size())
    {
        return Status::Corruption("powersgd: local state does not hold one warm start per matrix");
    }
    std::vector<at::Tensor> q(n);
    std::vector<uint64_t> draws(n, 0);
    for (uint32_t i = 0; i < n; ++i)
    {
        uint64_t rows = 0;
        uint64_t cols = 0;
        if (!r.GetU64(&draws[i]) || !r.GetU64(&rows) || !r.GetU64(&cols))
        {
            return Status::Corruption("powersgd: local state truncated");
        }
        if (rows == 0 && cols == 0)
        {
            continue;
        }
        if (draws[i] == 0)
        {
            return Status::Corruption("powersgd: local warm start " + std::to_string(i) +
                                      " is set but no random draw was counted");
        }
        const MatrixSpec& s = m_layout.matrix(i);
        if (static_cast<int64_t>(rows) != s.cols || cols == 0 ||
            cols > static_cast<uint64_t>(std::min(s.rows, s.cols)))
        {
            return Status::Corruption("powersgd: local warm start " + std::to_string(i) +
                                      " has the wrong shape");
        }
        q[i] = at::empty({static_cast<int64_t>(rows), static_cast<int64_t>(cols)}, at::kFloat);
        if (!r.GetFloats(q[i].data_ptr<float>(), rows * cols, ValueDtype::kFp32))
        {
            return Status::Corruption("powersgd: local state truncated");
        }
        if (!AllFinite(q[i].data_ptr<float>(), static_cast<int64_t>(rows * cols)))
        {
            return Status::Corruption("powersgd: local warm start " + std::to_string(i) +
                                      " holds a non-finite value");
        }
    }
    uint64_t residual = 0;
    if (!r.GetU64(&residual) ||
        (residual != 0 && residual != static_cast<uint64_t>(m_layout.numel())))
    {
        return Status::Corruption("powersgd: local residual has the wrong size");
    }
    std::vector<float> res(residual);
    if (!r.GetFloats(res.data(), residual, ValueDtype::kFp32) || !r.empty())
    {
        return Status::Corruption("powersgd: local state truncated or too long");
    }
    if (!AllFinite(res.data(), static_cast<int64_t>(residual)))
    {
        return Status::Corruption("powersgd: local residual holds a non-finite value");
    }
    m_q = std::move(q);
    m_q_draws = std::move(draws);
    m_residual = std::move(res);
    return Status::Ok();
}

Status
PowerSgdCompressor::Decode(std::string_view payload, std::vector<float>* out) const
{
    ByteReader r(payload);
    uint8_t dtype = 0;
    if (!r.GetU8(&dtype) || dtype != static_cast<uint8_t>(m_dtype))
    {
        return Status::Corruption("powersgd: missing or wrong value dtype (configured " +
                                  std::string(ValueDtypeName(m_dtype)) + ")");
    }
    uint64_t n = 0;
    if (!r.GetVarint(&n) || n != m_layout.size())
    {
        return Status::Corruption("powersgd: payload matrix count differs from the layout's " +
                                  std::to_string(m_layout.size()));
    }
    uint64_t k = 0;
    if (!r.GetVarint(&k) || k == 0 || k > static_cast<uint64_t>(std::max<int64_t>(1, m_full_rank)))
    {
        return Status::Corruption("powersgd: rank is missing, zero or exceeds every matrix");
    }
    if (static_cast<int64_t>(payload.size()) != PayloadBytes(static_cast<int64_t>(k)))
    {
        return Status::Corruption("powersgd: payload holds " + std::to_string(payload.size()) +
                                  " bytes, rank " + std::to_string(k) + " needs " +
                                  std::to_string(PayloadBytes(static_cast<int64_t>(k))));
    }
    out->resize(static_cast<size_t>(m_layout.numel()));
    // All factors first (one buffer each side), then one reconstruction pass over every matrix.
    int64_t left_len = 0;
    int64_t right_len = 0;
    for (const MatrixSpec& s : m_layout.matrices())
    {
        const int64_t ki = std::min({static_cast<int64_t>(k), s.rows, s.cols});
        left_len += ki * s.rows;
        right_len += ki * s.cols;
    }
    std::vector<float> left(static_cast<size_t>(left_len));
    std::vector<float> right(static_cast<size_t>(right_len));
    std::vector<LowRankFactors> factors(m_layout.size());
    float* lp = left.data();
    float* rp = right.data();
    for (size_t i = 0; i < m_layout.size(); ++i)
    {
        const MatrixSpec& s = m_layout.matrix(i);
        const int64_t ki = std::min({static_cast<int64_t>(k), s.rows, s.cols});
        for (int64_t j = 0; j < ki; ++j)
        {
            if (!GetCodedVector(&r, lp + j * s.rows, s.rows, m_dtype, 1.0f) ||
                !GetCodedVector(&r, rp + j * s.cols, s.cols, m_dtype, 1.0f))
            {
                return Status::Corruption("powersgd: factor " + std::to_string(j) + " of matrix " +
                                          std::to_string(i) + " holds a non-finite value");
            }
        }
        factors[i] = {s.rows, s.cols, ki, lp, rp, out->data() + m_layout.offset(i)};
        lp += ki * s.rows;
        rp += ki * s.cols;
    }
    if (!LowRankReconstructAll(factors))
    {
        return Status::Corruption("powersgd: the reconstruction overflows (a value is not finite)");
    }
    return Status::Ok();
}

} // namespace

StatusOr<std::unique_ptr<Compressor>>
NewPowerSgdCompressor(const AdapterLayout& layout, const CompressorOptions& options)
{
    OptionReader r("powersgd", options);
    ValueDtype dtype =
        r.Dtype("dtype", ValueDtype::kBf16,
                {ValueDtype::kFp32, ValueDtype::kBf16, ValueDtype::kFp16, ValueDtype::kInt8});
    int64_t max_rank = r.Int("max_rank", 0, 0, 1 << 20);
    int64_t seed = r.Int("seed", 1, 0, INT64_MAX);
    bool ef = r.Bool("error_feedback", false);
    HILO_RETURN_IF_ERROR(r.Finish());
    return std::unique_ptr<Compressor>(
        new PowerSgdCompressor(layout, dtype, max_rank, static_cast<uint64_t>(seed), ef));
}

} // namespace hilo
