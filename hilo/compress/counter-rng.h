// Counter-based random numbers for compressors: a value is a pure function of (seed, counter), so
// encoders can draw in parallel without shared state and decoders (randk) can rebuild any draw from
// the seed that travels in the payload. SplitMix64 finalizer (Steele, Lea, Flood 2014); no global
// state anywhere.
#ifndef HILO_COMPRESS_COUNTER_RNG_H
#define HILO_COMPRESS_COUNTER_RNG_H

#include <cstdint>

namespace hilo
{

/// The SplitMix64 output function: a bijective 64-bit mix.
inline uint64_t
SplitMix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/// The counter-th 64-bit draw of stream `seed`.
inline uint64_t
CounterRandom(uint64_t seed, uint64_t counter)
{
    return SplitMix64(SplitMix64(seed) ^ (counter * 0xd1b54a32d192ed03ULL));
}

/// A uniform float in [0, 1) with 24 random bits (exact in fp32).
inline float
CounterUniform(uint64_t seed, uint64_t counter)
{
    return static_cast<float>(CounterRandom(seed, counter) >> 40) * (1.0f / 16777216.0f);
}

/// A sequential generator over the same stream, for single-threaded encoders.
class CounterRng
{
  public:
    explicit CounterRng(uint64_t seed)
      : m_seed(seed)
    {
    }
    uint64_t Next() { return CounterRandom(m_seed, m_counter++); }
    /// Draws taken so far; with the seed, all a checkpoint needs to continue the stream.
    uint64_t counter() const { return m_counter; }
    void set_counter(uint64_t counter) { m_counter = counter; }

  private:
    uint64_t m_seed;
    uint64_t m_counter{0};
};

} // namespace hilo

#endif // HILO_COMPRESS_COUNTER_RNG_H
