// Real text for the tiny models: fortune(6) data files as Debian's `fortunes` package installs
// them (/usr/share/games/fortunes/<category>), bytes as tokens (vocabulary 256), and the shape and
// location of the base pretrained on them (models/tools/pretrain-text.cc writes it).
#ifndef MODELS_FORTUNE_CORPUS_H
#define MODELS_FORTUNE_CORPUS_H

#include "models/seeded-rng.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace models
{

/// The shape of the shipped text base: byte tokens, width 128, 2 blocks of 4 heads, 64 tokens.
struct TextBaseShape
{
    static constexpr int64_t kVocab = 256;
    static constexpr int64_t kDModel = 128;
    static constexpr int64_t kLayers = 2;
    static constexpr int64_t kHeads = 4;
    static constexpr int64_t kContext = 64;
};

/// The committed checkpoint (models/data/fortunes-lm.bin in the source tree).
std::string DefaultTextCheckpointPath();

/// The records of a fortune data file: the texts between lines holding only "%", without that
/// line, empty records dropped, in file order.
std::vector<std::string> SplitFortunes(const std::string& file_text);

/// `count` windows of `len` consecutive bytes of `text` at offsets drawn uniformly from
/// `rng`, as tokens [count, len] int64. REQUIRES: text.size() >= len.
at::Tensor TextWindows(std::string_view text, int64_t count, int64_t len, SeededRng* rng);

} // namespace models

#endif // MODELS_FORTUNE_CORPUS_H
