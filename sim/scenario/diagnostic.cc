#include "sim/scenario/diagnostic.h"

namespace hilosim
{

std::string
Diagnostic::ToString() const
{
    std::string out = file;
    if (!origin.empty())
    {
        out += ": " + origin;
    }
    else if (line > 0)
    {
        out += ":" + std::to_string(line);
        if (column > 0)
        {
            out += ":" + std::to_string(column);
        }
    }
    if (!field.empty())
    {
        out += ": " + field;
    }
    out += ": " + message;
    return out;
}

hilo::Status
DiagnosticList::ToStatus() const
{
    if (m_items.empty())
    {
        return hilo::Status::Ok();
    }
    std::string text;
    for (const Diagnostic& d : m_items)
    {
        text += (text.empty() ? "" : "\n") + d.ToString();
    }
    return hilo::Status::InvalidArgument(text);
}

} // namespace hilosim
