#include "hilo/compress/compressor-options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace hilo
{

StatusOr<CompressorOptions>
ParseCompressorOptions(const std::string& text)
{
    CompressorOptions out;
    size_t pos = 0;
    while (pos < text.size())
    {
        size_t end = text.find(';', pos);
        if (end == std::string::npos)
            end = text.size();
        std::string item = text.substr(pos, end - pos);
        pos = end + 1;
        if (item.empty())
            continue;
        size_t eq = item.find('=');
        if (eq == std::string::npos || eq == 0)
        {
            return Status::InvalidArgument("compressor option '" + item + "' is not key=value");
        }
        if (!out.emplace(item.substr(0, eq), item.substr(eq + 1)).second)
        {
            return Status::InvalidArgument("compressor option '" + item.substr(0, eq) +
                                           "' given twice");
        }
    }
    return out;
}

std::string
FormatCompressorOptions(const CompressorOptions& options)
{
    std::string out;
    for (const auto& [k, v] : options)
    {
        if (!out.empty())
            out += ';';
        out += k + "=" + v;
    }
    return out;
}

const std::string*
OptionReader::Find(const std::string& key)
{
    m_read.insert(key);
    auto it = m_options.find(key);
    return it == m_options.end() ? nullptr : &it->second;
}

void
OptionReader::Fail(const std::string& key, const std::string& what)
{
    if (m_status.ok())
    {
        m_status = Status::InvalidArgument(m_compressor + " option '" + key + "': " + what);
    }
}

int64_t
OptionReader::Int(const std::string& key, int64_t def, int64_t min, int64_t max)
{
    const std::string* v = Find(key);
    if (!v)
        return def;
    errno = 0;
    char* end = nullptr;
    long long x = std::strtoll(v->c_str(), &end, 10);
    if (v->empty() || *end != '\0' || errno != 0)
    {
        Fail(key, "'" + *v + "' is not an integer");
        return def;
    }
    if (x < min || x > max)
    {
        Fail(key, std::to_string(x) + " is outside [" + std::to_string(min) + ", " +
                      std::to_string(max) + "]");
        return def;
    }
    return x;
}

double
OptionReader::Double(const std::string& key, double def, double min, double max)
{
    const std::string* v = Find(key);
    if (!v)
        return def;
    char* end = nullptr;
    double x = std::strtod(v->c_str(), &end);
    if (v->empty() || *end != '\0' || !std::isfinite(x))
    {
        Fail(key, "'" + *v + "' is not a finite number");
        return def;
    }
    if (x < min || x > max)
    {
        Fail(key, *v + " is outside [" + std::to_string(min) + ", " + std::to_string(max) + "]");
        return def;
    }
    return x;
}

bool
OptionReader::Bool(const std::string& key, bool def)
{
    const std::string* v = Find(key);
    if (!v)
        return def;
    if (*v == "true" || *v == "1")
        return true;
    if (*v == "false" || *v == "0")
        return false;
    Fail(key, "'" + *v + "' is not a boolean (true, false)");
    return def;
}

std::string
OptionReader::Choice(const std::string& key, const std::string& def,
                     const std::set<std::string>& allowed)
{
    const std::string* v = Find(key);
    if (!v)
        return def;
    if (allowed.count(*v))
        return *v;
    std::string list;
    for (const std::string& a : allowed)
        list += (list.empty() ? "" : ", ") + a;
    Fail(key, "'" + *v + "' is not one of: " + list);
    return def;
}

ValueDtype
OptionReader::Dtype(const std::string& key, ValueDtype def, const std::set<ValueDtype>& allowed)
{
    std::set<std::string> names;
    for (ValueDtype d : allowed)
        names.insert(ValueDtypeName(d));
    std::string name = Choice(key, ValueDtypeName(def), names);
    StatusOr<ValueDtype> d = ParseValueDtype(name);
    return d.ok() ? *d : def;
}

Status
OptionReader::Finish() const
{
    if (!m_status.ok())
        return m_status;
    std::string unknown;
    for (const auto& [k, v] : m_options)
    {
        if (!m_read.count(k))
            unknown += (unknown.empty() ? "'" : ", '") + k + "'";
    }
    if (unknown.empty())
        return Status::Ok();
    std::string allowed;
    for (const std::string& k : m_read)
        allowed += (allowed.empty() ? "" : ", ") + k;
    return Status::InvalidArgument("unknown " + m_compressor + " option " + unknown +
                                   " (allowed: " + (allowed.empty() ? "none" : allowed) + ")");
}

} // namespace hilo
