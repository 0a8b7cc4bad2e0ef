// The bytes of an ArmResult, for handing a finished arm from the process that ran it to the one
// that writes the run's outputs (`hilo-sim run --jobs`). Every field travels, doubles as their
// IEEE-754 bits, so the outputs written from a decoded result are byte-identical to those written
// from the original.
//
// Format (little-endian, hilo/core/coding.h): the magic "HILOARM1", then the fields in the order
// of their declaration in arm-result.h; integers as u64 (u32, i64 cast), doubles as their bits,
// bools as one byte 0 or 1, strings and vectors as a varint count and their elements, an optional
// as a bool and, when set, its value, a Status as a u8 code and its message.
#ifndef HILOSIM_RUN_ARM_RESULT_CODEC_H
#define HILOSIM_RUN_ARM_RESULT_CODEC_H

#include "sim/run/arm-result.h"

#include "hilo/core/status.h"

#include <string>
#include <string_view>

namespace hilosim
{

/// The bytes of `result`.
std::string EncodeArmResult(const ArmResult& result);

/// Reads EncodeArmResult's bytes. Errors: kCorruption naming the field that is truncated, out of
/// range or followed by extra bytes (the bytes may come from a process that died mid-write).
hilo::StatusOr<ArmResult> DecodeArmResult(std::string_view bytes);

} // namespace hilosim

#endif // HILOSIM_RUN_ARM_RESULT_CODEC_H
