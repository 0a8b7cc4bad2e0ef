#include "models/csv-table.h"

#include <cmath>
#include <cstdlib>

namespace models
{
namespace
{

std::string
Trim(std::string_view s)
{
    size_t b = s.find_first_not_of(" \t\r");
    size_t e = s.find_last_not_of(" \t\r");
    return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

std::vector<std::string>
Split(std::string_view line)
{
    std::vector<std::string> cells;
    size_t start = 0;
    while (true)
    {
        size_t comma = line.find(',', start);
        cells.push_back(Trim(line.substr(start, comma - start)));
        if (comma == std::string_view::npos)
        {
            return cells;
        }
        start = comma + 1;
    }
}

} // namespace

hilo::StatusOr<CsvTable>
CsvTable::Parse(std::string_view text, const std::string& source)
{
    CsvTable t;
    t.m_source = source;
    bool have_header = false;
    int line_no = 0;
    size_t start = 0;
    while (start <= text.size())
    {
        size_t nl = text.find('\n', start);
        std::string line = Trim(text.substr(start, nl == std::string_view::npos ? nl : nl - start));
        ++line_no;
        start = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
        if (line.empty() || line[0] == '#')
        {
            continue;
        }
        std::vector<std::string> cells = Split(line);
        if (!have_header)
        {
            for (size_t i = 0; i < cells.size(); ++i)
            {
                t.m_columns[cells[i]] = i;
            }
            have_header = true;
            continue;
        }
        if (cells.size() != t.m_columns.size())
        {
            return hilo::Status::InvalidArgument(
                source + ":" + std::to_string(line_no) + ": " + std::to_string(cells.size()) +
                " cells, header has " + std::to_string(t.m_columns.size()));
        }
        t.m_rows.push_back(std::move(cells));
        t.m_lines.push_back(line_no);
    }
    if (!have_header)
    {
        return hilo::Status::InvalidArgument(source + ": no header line");
    }
    return t;
}

hilo::StatusOr<std::string>
CsvTable::Text(size_t row, const std::string& column) const
{
    auto it = m_columns.find(column);
    if (it == m_columns.end() || row >= m_rows.size())
    {
        return hilo::Status::InvalidArgument(m_source + ": no column '" + column + "'");
    }
    return m_rows[row][it->second];
}

hilo::StatusOr<double>
CsvTable::Number(size_t row, const std::string& column) const
{
    hilo::StatusOr<std::string> cell = Text(row, column);
    if (!cell.ok())
    {
        return cell.status();
    }
    char* end = nullptr;
    double v = std::strtod(cell->c_str(), &end);
    if (cell->empty() || end != cell->c_str() + cell->size() || !std::isfinite(v))
    {
        return hilo::Status::InvalidArgument(m_source + ":" + std::to_string(m_lines[row]) +
                                             ": column '" + column + "' is not a number: '" +
                                             *cell + "'");
    }
    return v;
}

} // namespace models
