#include "hilo/compress/elias-fano.h"

#include <string_view>

namespace hilo
{

int64_t
EliasFanoBytes(int64_t k, int64_t n, int low_bits)
{
    if (k == 0)
    {
        return 1;
    }
    const int64_t low = (k * low_bits + 7) / 8;
    const int64_t upper_bits = ((n - 1) >> low_bits) + k;
    return 1 + low + (upper_bits + 7) / 8;
}

int
EliasFanoBestLowBits(int64_t k, int64_t n)
{
    int best = 0;
    int64_t best_bytes = EliasFanoBytes(k, n, 0);
    for (int l = 1; l <= 56 && (int64_t{1} << (l - 1)) <= n; ++l)
    {
        const int64_t b = EliasFanoBytes(k, n, l);
        if (b < best_bytes)
        {
            best = l;
            best_bytes = b;
        }
    }
    return best;
}

void
PutEliasFano(ByteWriter* w, const int64_t* indices, int64_t k, int64_t n, int low_bits)
{
    w->PutU8(static_cast<uint8_t>(low_bits));
    if (k == 0)
    {
        return;
    }
    std::string low;
    low.reserve(static_cast<size_t>((k * low_bits + 7) / 8));
    const uint64_t mask = low_bits == 0 ? 0 : (~uint64_t{0} >> (64 - low_bits));
    uint64_t acc = 0; // pending bits, LSB first; fewer than 8 between values
    int pending = 0;
    for (int64_t i = 0; i < k && low_bits > 0; ++i)
    {
        acc |= (static_cast<uint64_t>(indices[i]) & mask) << pending;
        pending += low_bits; // <= 7 + 56 = 63
        while (pending >= 8)
        {
            low.push_back(static_cast<char>(acc & 0xff));
            acc >>= 8;
            pending -= 8;
        }
    }
    if (pending > 0)
    {
        low.push_back(static_cast<char>(acc & 0xff));
    }
    const int64_t upper_bits = ((n - 1) >> low_bits) + k;
    std::string upper(static_cast<size_t>((upper_bits + 7) / 8), '\0');
    for (int64_t i = 0; i < k; ++i)
    {
        const int64_t pos = (indices[i] >> low_bits) + i;
        upper[static_cast<size_t>(pos >> 3)] |= static_cast<char>(1u << (pos & 7));
    }
    w->PutBytes(low.data(), low.size());
    w->PutBytes(upper.data(), upper.size());
}

bool
GetEliasFano(ByteReader* r, int64_t k, int64_t n, std::vector<int64_t>* out)
{
    uint8_t l8 = 0;
    if (k < 0 || n < 1 || k > n || !r->GetU8(&l8) || l8 > 56)
    {
        return false;
    }
    const int low_bits = l8;
    if (k == 0)
    {
        out->clear();
        return true;
    }
    std::string_view low;
    std::string_view upper;
    const int64_t upper_bits = ((n - 1) >> low_bits) + k;
    if (!r->GetBytes(static_cast<size_t>((k * low_bits + 7) / 8), &low) ||
        !r->GetBytes(static_cast<size_t>((upper_bits + 7) / 8), &upper))
    {
        return false;
    }
    out->resize(static_cast<size_t>(k));
    int64_t* idx = out->data();
    // Upper parts: the i-th set bit at position p gives high = p - i.
    int64_t found = 0;
    const int64_t max_high = (n - 1) >> low_bits;
    const auto* ub = reinterpret_cast<const unsigned char*>(upper.data());
    const int64_t ubytes = static_cast<int64_t>(upper.size());
    for (int64_t byte = 0; byte < ubytes; byte += 8)
    {
        uint64_t word = 0;
        const int64_t take = std::min<int64_t>(8, ubytes - byte);
        for (int64_t t = 0; t < take; ++t)
        {
            word |= static_cast<uint64_t>(ub[byte + t]) << (8 * t);
        }
        while (word != 0)
        {
            const int64_t pos = byte * 8 + __builtin_ctzll(word);
            word &= word - 1;
            if (pos >= upper_bits || found == k || pos - found > max_high)
            {
                return false;
            }
            idx[found] = (pos - found) << low_bits;
            ++found;
        }
    }
    if (found != k)
    {
        return false;
    }
    if (low_bits > 0)
    {
        const auto* lb = reinterpret_cast<const unsigned char*>(low.data());
        const uint64_t mask = ~uint64_t{0} >> (64 - low_bits);
        uint64_t acc = 0;
        int have = 0;
        size_t next = 0;
        for (int64_t i = 0; i < k; ++i)
        {
            while (have < low_bits) // have + 8 <= 63
            {
                acc |= static_cast<uint64_t>(lb[next++]) << have;
                have += 8;
            }
            idx[i] |= static_cast<int64_t>(acc & mask);
            acc >>= low_bits;
            have -= low_bits;
        }
    }
    for (int64_t i = 0; i < k; ++i)
    {
        if (idx[i] >= n || (i > 0 && idx[i] <= idx[i - 1]))
        {
            return false;
        }
    }
    return true;
}

} // namespace hilo
