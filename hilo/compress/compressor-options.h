// Compressor options as key/value text, parsed strictly: every factory reads the keys it knows
// with typed getters and then calls Finish(), which rejects any key nobody read (no silent
// defaults for misspelled keys).
#ifndef HILO_COMPRESS_COMPRESSOR_OPTIONS_H
#define HILO_COMPRESS_COMPRESSOR_OPTIONS_H

#include "hilo/core/status.h"
#include "hilo/core/value-dtype.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace hilo
{

using CompressorOptions = std::map<std::string, std::string>;

/// Parses "a=1;b=bf16" (the Params() text form) into options.
StatusOr<CompressorOptions> ParseCompressorOptions(const std::string& text);
/// Formats options as canonical "a=1;b=bf16" (keys sorted).
std::string FormatCompressorOptions(const CompressorOptions& options);

class OptionReader
{
  public:
    OptionReader(std::string compressor, const CompressorOptions& options)
      : m_compressor(std::move(compressor))
      , m_options(options)
    {
    }

    /// Each getter returns the default when the key is absent and records the first parse error.
    int64_t Int(const std::string& key, int64_t def, int64_t min, int64_t max);
    double Double(const std::string& key, double def, double min, double max);
    bool Bool(const std::string& key, bool def);
    std::string Choice(const std::string& key, const std::string& def,
                       const std::set<std::string>& allowed);
    ValueDtype Dtype(const std::string& key, ValueDtype def, const std::set<ValueDtype>& allowed);
    /// Whether `key` was given (it still needs a getter to count as read).
    bool Has(const std::string& key) const { return m_options.count(key) > 0; }

    /// The first error, or an error naming every unread key and the keys that are allowed.
    Status Finish() const;

  private:
    const std::string* Find(const std::string& key);
    void Fail(const std::string& key, const std::string& what);

    std::string m_compressor;
    const CompressorOptions& m_options;
    std::set<std::string> m_read;
    Status m_status;
};

} // namespace hilo

#endif // HILO_COMPRESS_COMPRESSOR_OPTIONS_H
