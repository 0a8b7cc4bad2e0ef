// What the fuzz targets and their seed writer share: one small LoRA-shaped layout, every compressor
// with the option variants that change its payload, the sync configurations a replica is built
// from, and the byte layouts of the targets' inputs. A seed written for configuration i is read
// back as configuration i, so the tables below only ever grow at the end.
#ifndef HILO_TESTS_FUZZ_FUZZ_FIXTURE_H
#define HILO_TESTS_FUZZ_FUZZ_FIXTURE_H

#include "hilo/compress/compressor.h"
#include "hilo/core/adapter-layout.h"
#include "hilo/core/adapter-state.h"
#include "hilo/optim/optimizer-config.h"
#include "hilo/sync/sync-strategy.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hilo::fuzz
{

/// The layout of compressor golden tests: a 2x3 A factor and a 3x2 B factor (12 values).
AdapterLayout FuzzLayout();
/// A rank-16 layout (16x20 and 20x16, 640 values) for the configurations whose state needs a
/// rank above their sketch width: spar's warm-start bases.
AdapterLayout WideFuzzLayout();
/// Initial parameters every fuzzed replica and the seed writer's publisher start from.
AdapterState FuzzInitialState();

struct CompressorConfig
{
    const char* kind;
    const char* options; // "key=value;..." as in Params()
    bool wide{false};    // built for WideFuzzLayout() instead of FuzzLayout()
};
/// Every compressor kind, each with the option variants that change what Decode reads.
const std::vector<CompressorConfig>& CompressorConfigs();
/// Builds configuration `i` for its layout; aborts when it does not build (a broken table).
std::unique_ptr<Compressor> MakeCompressor(size_t i);

struct ReplicaConfig
{
    SyncSpec spec;
    OptimizerConfig optimizer;
};
/// The strategies and compressors replicas are fuzzed under (hilo with every compressor, full,
/// delta, an SGD optimizer whose snapshots carry one moment, primal with sparq, top-k and pulse,
/// delta with pulse, and a cosine schedule with error feedback).
const std::vector<ReplicaConfig>& ReplicaConfigs();

/// Rewrites the length and CRC-32C of a frame's header to match the bytes that follow, so that
/// mutated bodies reach the parsers behind the CRC. Inputs shorter than a header are unchanged.
std::string FixFrameHeader(std::string_view frame);

/// Splits `data` into chunks, each a u16 little-endian length then that many bytes (the last one
/// cut short at the end of the input). At most `max_chunks`.
std::vector<std::string> SplitChunks(std::string_view data, size_t max_chunks);
/// The inverse of SplitChunks, for the seed writer.
std::string JoinChunks(const std::vector<std::string>& chunks);

/// Input of fuzz-replica: [config byte][op byte][chunks]. The op byte's low two bits pick the
/// operation, bit 2 asks for FixFrameHeader on every chunk.
enum class ReplicaOp : uint8_t
{
    kApplyEach = 0, // Apply every chunk in order
    kRestore = 1,   // Restore chunk 0, then Apply the rest
    kCatchUp = 2,   // CatchUp(chunk 0, the rest)
};
constexpr uint8_t kFixFrames = 0x4;

/// Input of fuzz-restore: [target byte][bytes]. Target t < CompressorConfigs().size() feeds
/// RestoreLocalState of compressor t; the rest feed Publisher::Restore under replica config
/// (t - CompressorConfigs().size()) % ReplicaConfigs().size(), with ring capacity kRestoreRing
/// and snapshot interval kRestoreSnapshotInterval.
constexpr uint64_t kRestoreRing = 3;
constexpr uint64_t kRestoreSnapshotInterval = 2;

/// Stops the process when a fuzzed invariant fails, naming it (libFuzzer records the input).
[[noreturn]] void Fail(const std::string& what);

} // namespace hilo::fuzz

#endif // HILO_TESTS_FUZZ_FUZZ_FIXTURE_H
