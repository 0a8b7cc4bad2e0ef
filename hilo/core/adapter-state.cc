#include "hilo/core/adapter-state.h"

#include "hilo/core/hash.h"

namespace hilo
{

uint64_t
AdapterState::Hash() const
{
    return HashFloats(theta);
}

uint64_t
OptimizerState::Hash() const
{
    Hasher h;
    h.AddU64(step);
    h.AddF32(beta1_prod);
    h.AddF32(beta2_prod);
    h.AddU64(m.size());
    h.AddBytes(m.data(), m.size() * sizeof(float));
    h.AddU64(v.size());
    h.AddBytes(v.data(), v.size() * sizeof(float));
    return h.Digest();
}

} // namespace hilo
