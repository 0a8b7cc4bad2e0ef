// CsvTable: the strict reader of the profile data files (models/data/*.csv): '#' lines are
// comments, the first other line is the header, every row has exactly the header's columns.
#ifndef MODELS_CSV_TABLE_H
#define MODELS_CSV_TABLE_H

#include "hilo/core/status.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace models
{

class CsvTable
{
  public:
    /// Parses `text`; `source` names it in errors ("gpus.csv").
    static hilo::StatusOr<CsvTable> Parse(std::string_view text, const std::string& source);

    size_t rows() const { return m_rows.size(); }
    /// The cell of `column` in row `row`; kInvalidArgument naming the file, line and column when
    /// the column is missing or (for numbers) the cell is not a finite number.
    hilo::StatusOr<std::string> Text(size_t row, const std::string& column) const;
    hilo::StatusOr<double> Number(size_t row, const std::string& column) const;

  private:
    std::string m_source;
    std::map<std::string, size_t> m_columns;
    std::vector<std::vector<std::string>> m_rows;
    std::vector<int> m_lines; // source line of each row, for messages
};

} // namespace models

#endif // MODELS_CSV_TABLE_H
