// The input layout of fuzz-transport (fuzz-transport.cc) and its seeds, shared by the target and
// the seed writer (write-seeds.cc). Input: [mode byte][chunks] (fuzz-fixture.h's SplitChunks);
// the low two bits of the mode pick what is driven:
//   kFrames     a FrameReader over the chunks' bytes, each chunk one read. Mode bit 2: the hello
//               is done from the start; bit 3: per-type limits ((type % 7) * 9 bytes); bits 4-7:
//               the payload step - 1 (1 to 16 bytes, so that growth is reached with small inputs).
//   kHello      a listener (id 100) and a dialler (id 7) HelloExchange; bit 2: with a key. Each
//               chunk is an action, its first byte a: a % 4 = 0 hands the dialler's next frame to
//               the listener, 1 the listener's next frame to the dialler, 2 and 3 inject the
//               chunk's other bytes to the listener or the dialler; a & 4 flips bit (a >> 3) % 8
//               of byte chunk[1] of the frame handed over.
//   kRecords    records sealed under a fixed key, opened in order. Each chunk is an action, its
//               first byte a and the rest a plaintext: a % 4 = 0 seals it, 1 seals it and flips
//               bit (a >> 3) % 8 of one of its bytes (at chunk[1]), 2 seals it and drops the
//               record, 3 appends the bytes as they are. The plaintext that opens goes through a
//               FrameReader (hello done).
//   kAdmission  DecideAdmission on members, caps and pending sources taken from the bytes.
#ifndef HILO_TESTS_FUZZ_TRANSPORT_INPUT_H
#define HILO_TESTS_FUZZ_TRANSPORT_INPUT_H

#include <cstdint>
#include <filesystem>
#include <string>

namespace hilo::fuzz
{

enum class TransportMode : uint8_t
{
    kFrames = 0,
    kHello = 1,
    kRecords = 2,
    kAdmission = 3,
};
constexpr uint8_t kTransportHelloDone = 0x4;  // kFrames
constexpr uint8_t kTransportTypeLimits = 0x8; // kFrames
constexpr uint8_t kTransportKeyed = 0x4;      // kHello
constexpr uint32_t kTransportListenerId = 100;
constexpr uint32_t kTransportDiallerId = 7;
/// The record key of kRecords (32 bytes).
std::string TransportRecordKey();
/// The run key of kHello with kTransportKeyed (32 bytes).
std::string TransportRunKey();

/// Writes the seeds of fuzz-transport into `dir`: frames of every kind (hellos, messages with
/// padding, a 2 GiB announcement, a bad CRC) in whole and byte-by-byte reads, the honest hello
/// exchange with and without a key, and sealed frames.
void WriteTransportSeeds(const std::filesystem::path& dir);

} // namespace hilo::fuzz

#endif // HILO_TESTS_FUZZ_TRANSPORT_INPUT_H
