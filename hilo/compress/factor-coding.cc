#include "hilo/compress/factor-coding.h"

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
        if (!std::isfinite(step))
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

void
LowRankReconstruct(int64_t rows, int64_t cols, int64_t k, const float* left, const float* right,
                   float* out)
{
    // Grain: about 64 Ki output values per task, at least one row.
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, cols));
    ParallelFor(0, rows, grain,
                [&](int64_t begin, int64_t end)
                {
                    for (int64_t r = begin; r < end; ++r)
                    {
                        float* o = out + r * cols;
                        if (k == 0)
                        {
                            std::fill(o, o + cols, 0.0f);
                            continue;
                        }
                        const float a0 = left[r];
                        const float* v0 = right;
                        for (int64_t c = 0; c < cols; ++c)
                        {
                            o[c] = a0 * v0[c];
                        }
                        for (int64_t j = 1; j < k; ++j)
                        {
                            const float a = left[j * rows + r];
                            const float* v = right + j * cols;
                            for (int64_t c = 0; c < cols; ++c)
                            {
                                const float p = a * v[c];
                                o[c] = o[c] + p;
                            }
                        }
                    }
                });
}

} // namespace hilo
