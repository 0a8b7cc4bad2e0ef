#include "hilo/compress/factor-coding.h"

#include "hilo/core/finite.h"
#include "hilo/core/parallel.h"

#include <algorithm>
#include <cmath>

namespace hilo
{

void
PutCodedVector(ByteWriter* w, const float* v, int64_t n, ValueDtype dtype)
{
    if (dtype != ValueDtype::kInt8)
    {
        w->PutFloats(v, static_cast<size_t>(n), dtype);
        return;
    }
    float absmax = 0.0f;
    for (int64_t i = 0; i < n; ++i)
    {
        absmax = std::max(absmax, std::fabs(v[i]));
    }
    const float scale = absmax / 127.0f;
    w->PutF32(scale);
    std::string codes(static_cast<size_t>(n), '\0');
    if (scale > 0.0f)
    {
        const float inv = 127.0f / absmax;
        for (int64_t i = 0; i < n; ++i)
        {
            float q = std::nearbyint(v[i] * inv);
            q = std::min(127.0f, std::max(-127.0f, q));
            codes[static_cast<size_t>(i)] = static_cast<char>(static_cast<int8_t>(q));
        }
    }
    w->PutBytes(codes.data(), codes.size());
}

bool
GetCodedVector(ByteReader* r, float* out, int64_t n, ValueDtype dtype, float multiplier)
{
    if (dtype == ValueDtype::kInt8)
    {
        float scale = 0.0f;
        std::string_view codes;
        if (!r->GetF32(&scale) || !std::isfinite(scale) || scale < 0.0f ||
            !r->GetBytes(static_cast<size_t>(n), &codes))
        {
            return false;
        }
        const float step = multiplier * scale;
        // |q| <= 127 and rounding is monotone, so every step * q is finite iff step * 127 is.
        if (!std::isfinite(step) || !std::isfinite(step * 127.0f))
        {
            return false;
        }
        for (int64_t i = 0; i < n; ++i)
        {
            const int8_t q = static_cast<int8_t>(codes[static_cast<size_t>(i)]);
            if (q == -128)
            {
                return false;
            }
            out[i] = step * static_cast<float>(q);
        }
        return true;
    }
    if (!r->GetFloats(out, static_cast<size_t>(n), dtype))
    {
        return false;
    }
    bool finite = true;
    for (int64_t i = 0; i < n; ++i)
    {
        const float y = multiplier * out[i];
        finite &= std::isfinite(y);
        out[i] = y;
    }
    return finite;
}

namespace
{

/// Rows [begin, end) of one reconstruction: each output value is its own fixed-order sum.
/// Returns false when an output value is not finite (the sum overflowed, or a factor was not
/// finite); each row is checked right after it is written, while it is still in cache.
bool
ReconstructRows(const LowRankFactors& f, int64_t begin, int64_t end)
{
    bool finite = true;
    for (int64_t r = begin; r < end; ++r)
    {
        float* o = f.out + r * f.cols;
        if (f.k == 0)
        {
            std::fill(o, o + f.cols, 0.0f);
            continue;
        }
        const float a0 = f.left[r];
        const float* v0 = f.right;
        for (int64_t c = 0; c < f.cols; ++c)
        {
            o[c] = a0 * v0[c];
        }
        for (int64_t j = 1; j < f.k; ++j)
        {
            const float a = f.left[j * f.rows + r];
            const float* v = f.right + j * f.cols;
            for (int64_t c = 0; c < f.cols; ++c)
            {
                const float p = a * v[c];
                o[c] = o[c] + p;
            }
        }
        finite &= AllFinite(o, f.cols);
    }
    return finite;
}

struct RowBlock
{
    size_t matrix;
    int64_t begin;
    int64_t end;
};

} // namespace

bool
LowRankReconstruct(int64_t rows, int64_t cols, int64_t k, const float* left, const float* right,
                   float* out)
{
    return LowRankReconstructAll({LowRankFactors{rows, cols, k, left, right, out}});
}

bool
LowRankReconstructAll(const std::vector<LowRankFactors>& matrices)
{
    // Blocks of about 64 Ki output values (at least one row), each costed rows x cols x max(k, 1).
    std::vector<RowBlock> blocks;
    std::vector<double> cost_end; // cumulative cost after each block
    double total = 0.0;
    for (size_t i = 0; i < matrices.size(); ++i)
    {
        const LowRankFactors& f = matrices[i];
        const int64_t rows_per_block =
            std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, f.cols));
        for (int64_t r = 0; r < f.rows; r += rows_per_block)
        {
            const int64_t e = std::min(f.rows, r + rows_per_block);
            blocks.push_back({i, r, e});
            total += static_cast<double>(e - r) * static_cast<double>(f.cols) *
                     static_cast<double>(std::max<int64_t>(f.k, 1));
            cost_end.push_back(total);
        }
    }
    if (blocks.empty())
    {
        return true;
    }
    // One task per thread, each a contiguous run of blocks holding an equal share of the work.
    // The split only decides which thread writes which rows, never what they hold.
    const int64_t parts = std::max<int64_t>(
        1, std::min<int64_t>(at::get_num_threads(), static_cast<int64_t>(blocks.size())));
    std::vector<size_t> first(static_cast<size_t>(parts) + 1, blocks.size());
    first[0] = 0;
    for (int64_t p = 1; p < parts; ++p)
    {
        const double share = total * static_cast<double>(p) / static_cast<double>(parts);
        first[static_cast<size_t>(p)] = static_cast<size_t>(
            std::lower_bound(cost_end.begin(), cost_end.end(), share) - cost_end.begin());
    }
    std::vector<char> part_finite(static_cast<size_t>(parts), 1);
    ParallelFor(0, parts, 1,
                [&](int64_t pb, int64_t pe)
                {
                    for (int64_t p = pb; p < pe; ++p)
                    {
                        const size_t b0 = first[static_cast<size_t>(p)];
                        const size_t b1 = std::max(b0, first[static_cast<size_t>(p) + 1]);
                        bool finite = true;
                        for (size_t b = b0; b < b1; ++b)
                        {
                            finite &= ReconstructRows(matrices[blocks[b].matrix], blocks[b].begin,
                                                      blocks[b].end);
                        }
                        part_finite[static_cast<size_t>(p)] = finite;
                    }
                });
    for (char f : part_finite)
    {
        if (!f)
        {
            return false;
        }
    }
    return true;
}

Status
ReadLowRankRanks(ByteReader* r, const AdapterLayout& layout, const std::string& name,
                 const std::function<int64_t(const MatrixSpec&)>& triplet_bytes,
                 LowRankPayload* out)
{
    uint64_t count = 0;
    if (!r->GetVarint(&count) || count != layout.size())
    {
        return Status::Corruption(name + ": payload matrix count differs from the layout's " +
                                  std::to_string(layout.size()));
    }
    out->ks.assign(layout.size(), 0);
    out->left_at.assign(layout.size(), 0);
    out->right_at.assign(layout.size(), 0);
    int64_t expected = 0;
    int64_t left_len = 0;
    int64_t right_len = 0;
    for (size_t i = 0; i < layout.size(); ++i)
    {
        const MatrixSpec& s = layout.matrix(i);
        uint64_t k = 0;
        if (!r->GetVarint(&k) || k > static_cast<uint64_t>(std::min(s.rows, s.cols)))
        {
            return Status::Corruption(name + ": rank of matrix " + std::to_string(i) +
                                      " is missing or exceeds its shape");
        }
        out->ks[i] = static_cast<int64_t>(k);
        out->left_at[i] = left_len;
        out->right_at[i] = right_len;
        expected += out->ks[i] * triplet_bytes(s);
        left_len += out->ks[i] * s.rows;
        right_len += out->ks[i] * s.cols;
    }
    if (static_cast<int64_t>(r->remaining()) != expected)
    {
        return Status::Corruption(name + ": payload holds " + std::to_string(r->remaining()) +
                                  " triplet bytes, the ranks need " + std::to_string(expected));
    }
    out->left.assign(static_cast<size_t>(left_len), 0.0f);
    out->right.assign(static_cast<size_t>(right_len), 0.0f);
    return Status::Ok();
}

bool
ReconstructLowRankPayload(const LowRankPayload& p, const AdapterLayout& layout,
                          std::vector<float>* out)
{
    out->resize(static_cast<size_t>(layout.numel()));
    std::vector<LowRankFactors> factors(p.ks.size());
    for (size_t i = 0; i < p.ks.size(); ++i)
    {
        const MatrixSpec& s = layout.matrix(i);
        factors[i] = {s.rows,
                      s.cols,
                      p.ks[i],
                      p.left.data() + p.left_at[i],
                      p.right.data() + p.right_at[i],
                      out->data() + layout.offset(i)};
    }
    return LowRankReconstructAll(factors);
}

} // namespace hilo
