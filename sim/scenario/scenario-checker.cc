#include "sim/scenario/scenario-checker.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace hilosim
{
namespace scenario_check
{

std::string
Join(const std::vector<std::string>& items)
{
    std::string out;
    for (const std::string& s : items)
        out += (out.empty() ? "" : ", ") + s;
    return out;
}

bool
Contains(const std::vector<std::string>& items, const std::string& s)
{
    return std::find(items.begin(), items.end(), s) != items.end();
}

std::string
Num(double v)
{
    std::ostringstream os;
    os << v;
    return os.str();
}

bool
IsDotName(const std::string& s)
{
    return s == "." || s == "..";
}

bool
IsIdentifier(const std::string& s)
{
    if (s.empty() || s.size() > 64 || IsDotName(s))
        return false;
    for (char c : s)
    {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

bool
Checker::PositiveTime(const Node& n, const char* field, const std::string& text,
                      std::optional<ns3::Time>* out)
{
    if (text.empty())
        return true;
    auto t = hilosim::ParseTime(text);
    if (!t.ok())
    {
        Error(n, field, t.status().message());
        return false;
    }
    if (!t->IsStrictlyPositive())
    {
        Error(n, field, "must be > 0, got \"" + text + "\"");
        return false;
    }
    *out = *t;
    return true;
}

} // namespace scenario_check
} // namespace hilosim
