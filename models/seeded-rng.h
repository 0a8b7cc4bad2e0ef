// SeededRng: the one explicit random source of the workloads (prompts, sampling, LoRA init).
// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fully specified generator, so samples depend only
// on the seed and never on LibTorch's global generator, its version, or the thread count.
#ifndef MODELS_SEEDED_RNG_H
#define MODELS_SEEDED_RNG_H

#include <cstdint>
#include <initializer_list>

namespace models
{

class SeededRng
{
  public:
    explicit SeededRng(uint64_t seed)
      : m_state(seed)
    {
    }

    /// A seed derived from several words (e.g. {seed, step, worker, stream}); order matters.
    static uint64_t Mix(std::initializer_list<uint64_t> words)
    {
        uint64_t h = 0x6a09e667f3bcc909ull;
        for (uint64_t w : words)
        {
            SeededRng r(h ^ w);
            h = r.Next();
        }
        return h;
    }

    uint64_t Next()
    {
        uint64_t z = (m_state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }

    /// Uniform in [0, 1) with 53 random bits.
    double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

    /// Uniform integer in [0, n). REQUIRES: n > 0. (Modulo bias is below 2^-40 for small n.)
    uint64_t Below(uint64_t n) { return Next() % n; }

  private:
    uint64_t m_state;
};

} // namespace models

#endif // MODELS_SEEDED_RNG_H
