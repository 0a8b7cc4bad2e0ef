// SourceMap: where each value of a scenario came from, so that diagnostics name the file, the line
// and the field, or the `--set` override that put the value there.
#ifndef HILOSIM_SCENARIO_SOURCE_MAP_H
#define HILOSIM_SCENARIO_SOURCE_MAP_H

#include <google/protobuf/text_format.h>

#include <string>
#include <utility>
#include <vector>

namespace hilosim
{

class SourceMap
{
  public:
    /// `tree` holds the parser's field locations (may be null: no line numbers); it must outlive
    /// this object. `file` is the scenario file as the user named it.
    SourceMap(std::string file, const google::protobuf::TextFormat::ParseInfoTree* tree)
      : m_file(std::move(file))
      , m_tree(tree)
    {
    }

    /// Records that `--set ASSIGNMENT` set the field at canonical path `path`
    /// ("arms[1].budget"), in the order the overrides were applied.
    void AddOverride(std::string path, std::string assignment)
    {
        m_overrides.emplace_back(std::move(path), std::move(assignment));
    }

    const std::string& file() const { return m_file; }
    const google::protobuf::TextFormat::ParseInfoTree* tree() const { return m_tree; }

    /// "--set a.b=v" when the last override touching `path` set it, one of its parents, or a
    /// field inside it; empty when the value came from the file (or a default).
    std::string OverrideFor(const std::string& path) const;

  private:
    std::string m_file;
    const google::protobuf::TextFormat::ParseInfoTree* m_tree;
    std::vector<std::pair<std::string, std::string>> m_overrides; // (path, assignment)
};

} // namespace hilosim

#endif // HILOSIM_SCENARIO_SOURCE_MAP_H
