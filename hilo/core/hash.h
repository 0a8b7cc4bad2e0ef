// Content hashing: xxHash64 (seed 0, Debian's libxxhash) over raw little-endian bytes.
// The state hash of an adapter is XXH64 of its fp32 parameters in canonical layout order; it is
// what learner and replicas compare after every apply.
#ifndef HILO_CORE_HASH_H
#define HILO_CORE_HASH_H

#include <cstdint>
#include <string_view>
#include <vector>

namespace hilo
{

/// XXH64 of the bytes of `values`, seed 0.
uint64_t HashFloats(const std::vector<float>& values);
/// XXH64 of a byte range, seed 0.
uint64_t HashBytes(const void* data, size_t size);

/// Streaming XXH64 for digests of several fields (configuration hashes, layout fingerprints).
/// Integers are added as fixed-width little-endian bytes; strings with their length first.
class Hasher
{
  public:
    Hasher();
    ~Hasher();
    Hasher(const Hasher&) = delete;
    Hasher& operator=(const Hasher&) = delete;

    void AddBytes(const void* data, size_t size);
    void AddU64(uint64_t v);
    void AddF32(float v);
    void AddF64(double v);
    void AddString(std::string_view s);
    uint64_t Digest() const;

  private:
    void* m_state; // XXH64_state_t*
};

} // namespace hilo

#endif // HILO_CORE_HASH_H
