// Compressor: the seam every gradient (or delta) encoding plugs into (GRACE shape). Only the
// payload goes on the wire; learner-local context (PowerSGD's warm start, Spar's allocation
// statistics) stays inside the encoder instance or in Encoded's local fields.
#ifndef HILO_COMPRESS_COMPRESSOR_H
#define HILO_COMPRESS_COMPRESSOR_H

#include "hilo/core/adapter-layout.h"
#include "hilo/core/status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hilo
{

/// The result of one Encode: the wire payload plus local facts that never travel.
struct Encoded
{
    std::string payload;                  // the only thing counted and sent
    std::vector<int64_t> kept_per_matrix; // local: rank (spar, powersgd) or entries (topk...) kept
                                          // per layout matrix; empty when not meaningful
};

class Compressor
{
  public:
    virtual ~Compressor() = default;

    /// Stable name of the encoding, versioned ("dense-v1"). Changes whenever the encoding changes.
    virtual std::string Name() const = 0;
    /// Canonical "key=value;key=value" text of the options (keys sorted). Travels in every Update
    /// and enters the config hash, so learner and workers must agree on it.
    virtual std::string Params() const = 0;
    /// The layout this instance encodes and decodes.
    virtual const AdapterLayout& layout() const = 0;

    /// Smallest payload this compressor can produce for its layout, headers included.
    virtual int64_t MinPayloadBytes() const = 0;

    /// Encodes `x` (layout().numel() values, canonical order) into at most `budget_bytes` bytes.
    /// Returns kBudgetTooSmall (naming MinPayloadBytes()) when the budget cannot hold the
    /// smallest payload, kInvalidArgument when x has the wrong size. Non-const: an encoder may keep
    /// learner-local context across calls.
    virtual StatusOr<Encoded> Encode(const std::vector<float>& x, int64_t budget_bytes) = 0;

    /// Decodes `payload` into `out` (resized to numel). Deterministic: bit-identical results for
    /// every instance, thread count and host running this build. Malformed payloads, and payloads
    /// any of whose decoded values would be NaN or infinite, return kCorruption; `out` may then
    /// hold garbage (callers decode into scratch buffers).
    virtual Status Decode(std::string_view payload, std::vector<float>* out) const = 0;

    /// The learner-local state later Encode calls depend on (PowerSGD's warm start and residual,
    /// the stream position of quant's rounding and randk's sampling), serialized; empty for a
    /// compressor that keeps none. A learner checkpoint saves it so that a restored encoder
    /// continues bit-identically (hilo/sync/publisher.h).
    virtual std::string SaveLocalState() const { return {}; }
    /// Restores SaveLocalState()'s bytes into an instance with the same Name() and Params().
    /// kCorruption for bytes it cannot use (the instance is then unchanged).
    virtual Status RestoreLocalState(std::string_view state)
    {
        return state.empty() ? Status::Ok()
                             : Status::Corruption(Name() + " keeps no local state, got " +
                                                  std::to_string(state.size()) + " bytes");
    }
};

} // namespace hilo

#endif // HILO_COMPRESS_COMPRESSOR_H
