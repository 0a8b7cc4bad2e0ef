#include "sim/scenario/budget-text.h"

#include "sim/net/units.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace hilosim
{
namespace
{

const char* const kAllowed = "allowed: a percentage of the adapter's bytes in (0, 100]% (e.g. "
                             "\"1.6%\"), a positive size (e.g. \"64KiB\", \"4096B\", \"2MB\") "
                             "or \"unlimited\"";

// A plain decimal: digits with at most one '.', at least one digit, nothing else.
bool
IsDecimal(const std::string& s)
{
    int digits = 0;
    int dots = 0;
    for (char c : s)
    {
        if (std::isdigit(static_cast<unsigned char>(c)))
            ++digits;
        else if (c == '.')
            ++dots;
        else
            return false;
    }
    return digits > 0 && dots <= 1;
}

} // namespace

hilo::StatusOr<hilo::Budget>
ParseBudget(const std::string& text)
{
    if (text.empty() || text == "unlimited")
    {
        return hilo::Budget::Unlimited();
    }
    if (text.back() == '%')
    {
        const std::string number = text.substr(0, text.size() - 1);
        const double percent = IsDecimal(number) ? std::strtod(number.c_str(), nullptr) : -1.0;
        if (!(percent > 0.0 && percent <= 100.0))
        {
            return hilo::Status::InvalidArgument("bad budget \"" + text + "\"; " + kAllowed);
        }
        return hilo::Budget::Fraction(percent / 100.0);
    }
    auto bytes = hilosim::ParseBytes(text);
    if (!bytes.ok())
    {
        return hilo::Status::InvalidArgument("bad budget \"" + text + "\" (" +
                                             bytes.status().message() + "); " + kAllowed);
    }
    if (*bytes == 0)
    {
        return hilo::Status::InvalidArgument("bad budget \"" + text + "\" (zero bytes); " +
                                             kAllowed);
    }
    return hilo::Budget::Bytes(static_cast<int64_t>(*bytes));
}

} // namespace hilosim
