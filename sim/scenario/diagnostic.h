// Diagnostic: one problem found in a scenario, located by file, line and field path, and the list
// the loader collects them in (every problem is reported, not just the first).
#ifndef HILOSIM_SCENARIO_DIAGNOSTIC_H
#define HILOSIM_SCENARIO_DIAGNOSTIC_H

#include "hilo/core/status.h"

#include <string>
#include <vector>

namespace hilosim
{

struct Diagnostic
{
    std::string file;    // the scenario file as the user named it
    int line{0};         // 1-based; 0 when the problem has no line (a default, a missing field)
    int column{0};       // 1-based; 0 when unknown
    std::string origin;  // "--set path=value" when an override put the value there, else empty
    std::string field;   // dotted path "arms[1].budget"; empty when no field applies
    std::string message; // what is wrong, then "; allowed: ..." where a list applies

    /// "FILE:LINE:COL: FIELD: MESSAGE", leaving out what is unknown; an override reads
    /// "FILE: --set path=value: FIELD: MESSAGE".
    std::string ToString() const;
};

class DiagnosticList
{
  public:
    void Add(Diagnostic d) { m_items.push_back(std::move(d)); }
    bool empty() const { return m_items.empty(); }
    const std::vector<Diagnostic>& items() const { return m_items; }
    /// Ok when empty, else kInvalidArgument whose message is every diagnostic, one per line, in
    /// the order added.
    hilo::Status ToStatus() const;

  private:
    std::vector<Diagnostic> m_items;
};

} // namespace hilosim

#endif // HILOSIM_SCENARIO_DIAGNOSTIC_H
