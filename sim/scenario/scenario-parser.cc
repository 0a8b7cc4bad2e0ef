#include "sim/scenario/scenario-parser.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <map>
#include <regex>
#include <vector>

namespace hilosim
{
namespace
{

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::io::ColumnNumber;
using google::protobuf::io::Tokenizer;

struct ParseError
{
    int line{0};   // 0-based, as protobuf reports it
    int column{0}; // 0-based
    std::string message;
};

class CollectErrors : public google::protobuf::io::ErrorCollector
{
  public:
    void AddError(int line, ColumnNumber column, const std::string& message) override
    {
        m_errors.push_back({line, column, message});
    }
    void AddWarning(int line, ColumnNumber column, const std::string& message) override {}
    const std::vector<ParseError>& errors() const { return m_errors; }

  private:
    std::vector<ParseError> m_errors;
};

std::string
FieldNames(const Descriptor* d)
{
    std::string out;
    for (int i = 0; i < d->field_count(); ++i)
        out += (i ? ", " : "") + d->field(i)->name();
    return out;
}

// The dotted path of the field being parsed at (line, column): re-tokenizes the text up to there
// and follows `name {` / `}` nesting through the schema, counting repeated elements.
std::string
FieldPathAt(const std::string& text, int line, int column)
{
    struct Level
    {
        const Descriptor* type; // null inside an unknown field
        std::string path;
        std::map<std::string, int> seen; // repeated field -> elements so far
    };
    std::vector<Level> stack{{Scenario::descriptor(), "", {}}};
    google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
    CollectErrors ignored;
    Tokenizer tok(&input, &ignored);
    tok.set_comment_style(Tokenizer::SH_COMMENT_STYLE);
    std::string pending; // the field name of the current statement
    bool after_colon = false;
    auto join = [](const std::string& path, const std::string& name)
    { return path.empty() ? name : path + "." + name; };
    while (tok.Next())
    {
        const Tokenizer::Token& t = tok.current();
        const bool at_error = t.line > line || (t.line == line && t.column >= column);
        if (at_error)
        {
            if (t.type == Tokenizer::TYPE_IDENTIFIER && !after_colon)
                return join(stack.back().path, t.text);
            return pending.empty() ? stack.back().path : join(stack.back().path, pending);
        }
        if (t.type == Tokenizer::TYPE_IDENTIFIER && !after_colon)
        {
            pending = t.text;
        }
        else if (t.text == ":")
        {
            after_colon = true;
            continue;
        }
        else if (t.text == "{" || t.text == "<")
        {
            Level& top = stack.back();
            const FieldDescriptor* fd = top.type ? top.type->FindFieldByName(pending) : nullptr;
            std::string name = pending;
            if (fd != nullptr && fd->is_repeated())
                name += "[" + std::to_string(top.seen[pending]++) + "]";
            stack.push_back({fd != nullptr && fd->message_type() ? fd->message_type() : nullptr,
                             join(top.path, name),
                             {}});
            pending.clear();
        }
        else if ((t.text == "}" || t.text == ">") && stack.size() > 1)
        {
            stack.pop_back();
            pending.clear();
        }
        else if (t.type != Tokenizer::TYPE_SYMBOL || t.text == "]")
        {
            // A value ends the statement, but keep its field name: a later error on this line
            // (a value of the wrong type) belongs to it.
        }
        after_colon = false;
    }
    return pending.empty() ? stack.back().path : join(stack.back().path, pending);
}

// Makes protobuf's message friendlier where we can add what is allowed.
std::string
Explain(const std::string& message)
{
    static const std::regex kNoField("Message type \"([^\"]+)\" has no field named \"([^\"]+)\"");
    std::smatch m;
    if (std::regex_search(message, m, kNoField))
    {
        const Descriptor* d =
            google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName(m[1]);
        std::string out = "unknown field \"" + m[2].str() + "\" in " + m[1].str();
        if (d != nullptr)
            out += "; allowed: " + FieldNames(d);
        return out;
    }
    return message;
}

} // namespace

bool
ParseScenarioText(const std::string& text, const std::string& file, Scenario* scenario,
                  google::protobuf::TextFormat::ParseInfoTree* tree, DiagnosticList* diagnostics)
{
    google::protobuf::TextFormat::Parser parser;
    CollectErrors errors;
    parser.RecordErrorsTo(&errors);
    if (tree != nullptr)
        parser.WriteLocationsTo(tree);
    const bool ok = parser.ParseFromString(text, scenario);
    for (const ParseError& e : errors.errors())
    {
        Diagnostic d;
        d.file = file;
        d.line = e.line + 1;
        d.column = e.column + 1;
        d.field = FieldPathAt(text, e.line, e.column);
        d.message = Explain(e.message);
        diagnostics->Add(std::move(d));
    }
    if (!ok && errors.errors().empty())
    {
        diagnostics->Add({file, 0, 0, "", "", "cannot parse the scenario (text format)"});
    }
    return ok && errors.errors().empty();
}

} // namespace hilosim
