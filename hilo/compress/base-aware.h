// BaseAwareCompressor: a compressor of parameter changes whose encoding depends on the parameters
// the receivers already hold. The strategies that ship parameter deltas (delta, primal) call
// SetBase with the replicas' parameters before every Encode; decoding needs no base (the payload
// is still a delta the replica adds), so replicas run the ordinary Decode. Strategies that ship
// gradients or whole parameters (hilo, full) refuse these compressors. They ship exact changes
// (pulse), so they take no byte budget: NewSyncStrategy refuses one.
#ifndef HILO_COMPRESS_BASE_AWARE_H
#define HILO_COMPRESS_BASE_AWARE_H

#include "hilo/compress/compressor.h"

#include <vector>

namespace hilo
{

class BaseAwareCompressor : public Compressor
{
  public:
    /// The replicas' parameters (layout().numel() values) the next Encode's delta will be added
    /// to. The pointer must stay valid until that Encode returns.
    virtual void SetBase(const std::vector<float>* base) = 0;
};

} // namespace hilo

#endif // HILO_COMPRESS_BASE_AWARE_H
