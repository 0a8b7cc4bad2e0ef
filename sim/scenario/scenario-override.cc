#include "sim/scenario/scenario-override.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <memory>
#include <vector>

namespace hilosim
{
namespace
{

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using hilo::Status;
using hilo::StatusOr;

struct Segment
{
    std::string field;
    bool has_selector{false};
    std::string selector; // text between [ and ]
};

StatusOr<std::vector<Segment>>
SplitPath(const std::string& path)
{
    std::vector<Segment> out;
    Segment cur;
    bool in_brackets = false;
    bool closed = false; // just saw ']': only '.' may follow
    for (char c : path)
    {
        if (in_brackets)
        {
            if (c == ']')
            {
                in_brackets = false;
                closed = true;
            }
            else
            {
                cur.selector += c;
            }
            continue;
        }
        if (c == '.')
        {
            if (cur.field.empty())
            {
                return Status::InvalidArgument("empty field name in path \"" + path + "\"");
            }
            out.push_back(cur);
            cur = Segment();
            closed = false;
        }
        else if (closed)
        {
            return Status::InvalidArgument("expected '.' after ']' in path \"" + path + "\"");
        }
        else if (c == '[')
        {
            if (cur.field.empty())
            {
                return Status::InvalidArgument("'[' without a field name in path \"" + path + "\"");
            }
            in_brackets = true;
            cur.has_selector = true;
        }
        else
        {
            cur.field += c;
        }
    }
    if (in_brackets)
    {
        return Status::InvalidArgument("unclosed '[' in path \"" + path + "\"");
    }
    if (cur.field.empty())
    {
        return Status::InvalidArgument("empty field name in path \"" + path + "\"");
    }
    out.push_back(cur);
    return out;
}

std::string
FieldNames(const Descriptor* d)
{
    std::string out;
    for (int i = 0; i < d->field_count(); ++i)
    {
        out += (i ? ", " : "") + d->field(i)->name();
    }
    return out;
}

std::string
TypeName(const FieldDescriptor* fd)
{
    if (fd->cpp_type() == FieldDescriptor::CPPTYPE_ENUM)
    {
        return "enum " + fd->enum_type()->full_name();
    }
    if (fd->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE)
    {
        return "message " + fd->message_type()->full_name();
    }
    return fd->type_name();
}

bool
ParseInt(const std::string& text, int64_t min, int64_t max, int64_t* out)
{
    if (text.empty() || text[0] == ' ' || text[0] == '+')
    {
        return false;
    }
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
    {
        return false;
    }
    *out = v;
    return true;
}

bool
ParseUint(const std::string& text, uint64_t max, uint64_t* out)
{
    if (text.empty() || !(text[0] >= '0' && text[0] <= '9'))
    {
        return false;
    }
    errno = 0;
    char* end = nullptr;
    unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
    {
        return false;
    }
    *out = v;
    return true;
}

bool
ParseDouble(const std::string& text, double* out)
{
    if (text.empty() || text[0] == ' ')
    {
        return false;
    }
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (errno == ERANGE || *end != '\0')
    {
        return false;
    }
    *out = v;
    return true;
}

class TextErrors : public google::protobuf::io::ErrorCollector
{
  public:
    void AddError(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override
    {
        if (m_text.empty())
        {
            m_text = "column " + std::to_string(column + 1) + ": " + message;
        }
    }
    const std::string& text() const { return m_text; }

  private:
    std::string m_text;
};

// Sets field `fd` of `msg` (element `index` when repeated, -1 when singular) from `value`.
Status
SetValue(Message* msg, const FieldDescriptor* fd, int index, const std::string& value,
         const std::string& path)
{
    const Reflection* r = msg->GetReflection();
    const bool rep = index >= 0;
    auto bad = [&](const std::string& expected)
    {
        return Status::InvalidArgument("bad value \"" + value + "\" for " + path + ": expected " +
                                       expected);
    };
    switch (fd->cpp_type())
    {
        case FieldDescriptor::CPPTYPE_INT32:
        {
            int64_t v = 0;
            if (!ParseInt(value, std::numeric_limits<int32_t>::min(),
                          std::numeric_limits<int32_t>::max(), &v))
                return bad("an int32 (decimal integer)");
            rep ? r->SetRepeatedInt32(msg, fd, index, static_cast<int32_t>(v))
                : r->SetInt32(msg, fd, static_cast<int32_t>(v));
            return Status::Ok();
        }
        case FieldDescriptor::CPPTYPE_INT64:
        {
            int64_t v = 0;
            if (!ParseInt(value, std::numeric_limits<int64_t>::min(),
                          std::numeric_limits<int64_t>::max(), &v))
                return bad("an int64 (decimal integer)");
            rep ? r->SetRepeatedInt64(msg, fd, index, v) : r->SetInt64(msg, fd, v);
            return Status::Ok();
        }
        case FieldDescriptor::CPPTYPE_UINT32:
        {
            uint64_t v = 0;
            if (!ParseUint(value, std::numeric_limits<uint32_t>::max(), &v))
                return bad("a uint32 (non-negative decimal integer)");
            rep ? r->SetRepeatedUInt32(msg, fd, index, static_cast<uint32_t>(v))
                : r->SetUInt32(msg, fd, static_cast<uint32_t>(v));
            return Status::Ok();
        }
        case FieldDescriptor::CPPTYPE_UINT64:
        {
            uint64_t v = 0;
            if (!ParseUint(value, std::numeric_limits<uint64_t>::max(), &v))
                return bad("a uint64 (non-negative decimal integer)");
            rep ? r->SetRepeatedUInt64(msg, fd, index, v) : r->SetUInt64(msg, fd, v);
            return Status::Ok();
        }
        case FieldDescriptor::CPPTYPE_DOUBLE:
        {
            double v = 0;
            if (!ParseDouble(value, &v))
                return bad("a number");
            rep ? r->SetRepeatedDouble(msg, fd, index, v) : r->SetDouble(msg, fd, v);
            return Status::Ok();
        }
        case FieldDescriptor::CPPTYPE_FLOAT:
        {
            double v = 0;
            if (!ParseDouble(value, &v))
                return bad("a number");
            rep ? r->SetRepeatedFloat(msg, fd, index, static_cast<float>(v))
                : r->SetFloat(msg, fd, static_cast<float>(v));
            return Status::Ok();
        }
        case FieldDescriptor::CPPTYPE_BOOL:
        {
            bool v = false;
            if (value == "true" || value == "1")
                v = true;
            else if (value == "false" || value == "0")
                v = false;
            else
                return bad("a bool (true, false, 1, 0)");
            rep ? r->SetRepeatedBool(msg, fd, index, v) : r->SetBool(msg, fd, v);
            return Status::Ok();
        }
        case FieldDescriptor::CPPTYPE_ENUM:
        {
            const auto* e = fd->enum_type();
            const auto* ev = e->FindValueByName(value);
            int64_t number = 0;
            if (ev == nullptr && ParseInt(value, std::numeric_limits<int32_t>::min(),
                                          std::numeric_limits<int32_t>::max(), &number))
            {
                ev = e->FindValueByNumber(static_cast<int>(number));
            }
            if (ev == nullptr)
            {
                std::string names;
                for (int i = 0; i < e->value_count(); ++i)
                    names += (i ? ", " : "") + e->value(i)->name();
                return bad("one of " + names);
            }
            rep ? r->SetRepeatedEnum(msg, fd, index, ev) : r->SetEnum(msg, fd, ev);
            return Status::Ok();
        }
        case FieldDescriptor::CPPTYPE_STRING:
            rep ? r->SetRepeatedString(msg, fd, index, value) : r->SetString(msg, fd, value);
            return Status::Ok();
        case FieldDescriptor::CPPTYPE_MESSAGE:
        {
            Message* sub =
                rep ? r->MutableRepeatedMessage(msg, fd, index) : r->MutableMessage(msg, fd);
            google::protobuf::TextFormat::Parser parser;
            TextErrors errors;
            parser.RecordErrorsTo(&errors);
            if (!parser.MergeFromString(value, sub))
            {
                return Status::InvalidArgument(
                    "bad value for " + path + ": expected " + sub->GetDescriptor()->full_name() +
                    " in text format (fields: " + FieldNames(sub->GetDescriptor()) + "); " +
                    errors.text());
            }
            return Status::Ok();
        }
    }
    return Status::Internal("unhandled field type of " + path);
}

// Adds a default element to repeated field `fd` and returns its index.
int
AppendDefault(Message* msg, const FieldDescriptor* fd)
{
    const Reflection* r = msg->GetReflection();
    switch (fd->cpp_type())
    {
        case FieldDescriptor::CPPTYPE_INT32:
            r->AddInt32(msg, fd, 0);
            break;
        case FieldDescriptor::CPPTYPE_INT64:
            r->AddInt64(msg, fd, 0);
            break;
        case FieldDescriptor::CPPTYPE_UINT32:
            r->AddUInt32(msg, fd, 0);
            break;
        case FieldDescriptor::CPPTYPE_UINT64:
            r->AddUInt64(msg, fd, 0);
            break;
        case FieldDescriptor::CPPTYPE_DOUBLE:
            r->AddDouble(msg, fd, 0);
            break;
        case FieldDescriptor::CPPTYPE_FLOAT:
            r->AddFloat(msg, fd, 0);
            break;
        case FieldDescriptor::CPPTYPE_BOOL:
            r->AddBool(msg, fd, false);
            break;
        case FieldDescriptor::CPPTYPE_ENUM:
            r->AddEnumValue(msg, fd, 0);
            break;
        case FieldDescriptor::CPPTYPE_STRING:
            r->AddString(msg, fd, "");
            break;
        case FieldDescriptor::CPPTYPE_MESSAGE:
            r->AddMessage(msg, fd);
            break;
    }
    return r->FieldSize(*msg, fd) - 1;
}

// The indices a selector of a repeated field with `size` elements may use: "an index from 0 to
// 2, or 3 to append one" (size 3), "index 0 to append one" (size 0).
std::string
IndexRange(int size)
{
    if (size == 0)
        return "index 0 to append one";
    return "an index from 0 to " + std::to_string(size - 1) + ", or " + std::to_string(size) +
           " to append one";
}

// Resolves `selector` of repeated field `fd` to an index (appending when it equals the size).
StatusOr<int>
SelectElement(Message* msg, const FieldDescriptor* fd, const std::string& selector,
              const std::string& where)
{
    const Reflection* r = msg->GetReflection();
    const int size = r->FieldSize(*msg, fd);
    uint64_t index = 0;
    if (ParseUint(selector, std::numeric_limits<int32_t>::max(), &index))
    {
        if (static_cast<int>(index) > size)
        {
            return Status::InvalidArgument(where + ": index " + selector +
                                           " is out of range: " + fd->name() + " has " +
                                           std::to_string(size) + " elements (index " +
                                           std::to_string(size) + " appends one)");
        }
        if (static_cast<int>(index) == size)
        {
            return AppendDefault(msg, fd);
        }
        return static_cast<int>(index);
    }
    const FieldDescriptor* name_fd = fd->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE
                                         ? fd->message_type()->FindFieldByName("name")
                                         : nullptr;
    if (name_fd == nullptr || name_fd->is_repeated() ||
        name_fd->cpp_type() != FieldDescriptor::CPPTYPE_STRING)
    {
        return Status::InvalidArgument(where + ": selector [" + selector + "] must be " +
                                       IndexRange(size));
    }
    std::string names;
    for (int i = 0; i < size; ++i)
    {
        const Message& e = r->GetRepeatedMessage(*msg, fd, i);
        const std::string name = e.GetReflection()->GetString(e, name_fd);
        if (name == selector)
        {
            return i;
        }
        names += (i ? ", " : "") + name;
    }
    return Status::InvalidArgument(where + ": no element of " + fd->name() + " is named \"" +
                                   selector + "\"; names: " + (names.empty() ? "(none)" : names) +
                                   " (or use " + IndexRange(size) + ")");
}

// Sets entry `key` of map field `fd` to `value`.
Status
SetMapEntry(Message* msg, const FieldDescriptor* fd, const std::string& key,
            const std::string& value, const std::string& path)
{
    const Reflection* r = msg->GetReflection();
    const Descriptor* entry_type = fd->message_type();
    const FieldDescriptor* key_fd = entry_type->map_key();
    const FieldDescriptor* value_fd = entry_type->map_value();
    // Parse the key by its type on a scratch entry, then compare entries by their text.
    std::unique_ptr<Message> probe(
        google::protobuf::MessageFactory::generated_factory()->GetPrototype(entry_type)->New());
    HILO_RETURN_IF_ERROR(SetValue(probe.get(), key_fd, -1, key, path + " (map key)"));
    std::string probe_key;
    google::protobuf::TextFormat::PrintFieldValueToString(*probe, key_fd, -1, &probe_key);
    const int size = r->FieldSize(*msg, fd);
    for (int i = 0; i < size; ++i)
    {
        Message* e = r->MutableRepeatedMessage(msg, fd, i);
        std::string k;
        google::protobuf::TextFormat::PrintFieldValueToString(*e, key_fd, -1, &k);
        if (k == probe_key)
        {
            return SetValue(e, value_fd, -1, value, path);
        }
    }
    Message* e = r->AddMessage(msg, fd);
    e->CopyFrom(*probe);
    Status s = SetValue(e, value_fd, -1, value, path);
    if (!s.ok())
    {
        r->RemoveLast(msg, fd);
    }
    return s;
}

} // namespace

StatusOr<std::string>
ApplyOverride(Message* root, const std::string& assignment)
{
    const size_t eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
    {
        return Status::InvalidArgument("expected path.to.field=value, got \"" + assignment + "\"");
    }
    const std::string path = assignment.substr(0, eq);
    const std::string value = assignment.substr(eq + 1);
    auto segments = SplitPath(path);
    if (!segments.ok())
    {
        return segments.status();
    }
    Message* msg = root;
    std::string canon;
    const size_t n = segments->size();
    for (size_t i = 0; i < n; ++i)
    {
        const Segment& seg = (*segments)[i];
        const bool last = i + 1 == n;
        const Descriptor* d = msg->GetDescriptor();
        const FieldDescriptor* fd = d->FindFieldByName(seg.field);
        const std::string at = canon.empty() ? "the top level" : canon;
        if (fd == nullptr)
        {
            return Status::InvalidArgument(path + ": no field \"" + seg.field + "\" at " + at +
                                           " (" + d->full_name() +
                                           "); valid fields: " + FieldNames(d));
        }
        canon += (canon.empty() ? "" : ".") + seg.field;
        const Reflection* r = msg->GetReflection();
        if (fd->is_map())
        {
            std::string key;
            if (seg.has_selector)
            {
                if (!last)
                {
                    return Status::InvalidArgument(path + ": " + canon + "[" + seg.selector +
                                                   "] is a map value; nothing may follow it");
                }
                key = seg.selector;
            }
            else
            {
                if (i + 2 != n || (*segments)[i + 1].has_selector)
                {
                    return Status::InvalidArgument(path + ": " + canon +
                                                   " is a map: name one key, as " + canon +
                                                   ".KEY=VALUE or " + canon + "[KEY]=VALUE");
                }
                key = (*segments)[i + 1].field;
            }
            canon += "." + key;
            HILO_RETURN_IF_ERROR(SetMapEntry(msg, fd, key, value, canon));
            return canon;
        }
        if (fd->is_repeated())
        {
            if (!seg.has_selector)
            {
                return Status::InvalidArgument(path + ": " + canon + " is repeated (" +
                                               std::to_string(r->FieldSize(*msg, fd)) +
                                               " elements): select one as " + canon + "[INDEX]" +
                                               (fd->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE
                                                    ? " or " + canon + "[NAME]"
                                                    : ""));
            }
            auto index = SelectElement(msg, fd, seg.selector, path);
            if (!index.ok())
            {
                return index.status();
            }
            canon += "[" + std::to_string(*index) + "]";
            if (fd->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !last)
            {
                msg = r->MutableRepeatedMessage(msg, fd, *index);
                continue;
            }
            if (!last)
            {
                return Status::InvalidArgument(path + ": " + canon + " is a " + TypeName(fd) +
                                               ", not a message; it has no field \"" +
                                               (*segments)[i + 1].field + "\"");
            }
            HILO_RETURN_IF_ERROR(SetValue(msg, fd, *index, value, canon));
            return canon;
        }
        if (seg.has_selector)
        {
            return Status::InvalidArgument(path + ": " + canon + " is not repeated; remove [" +
                                           seg.selector + "]");
        }
        if (fd->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !last)
        {
            msg = r->MutableMessage(msg, fd);
            continue;
        }
        if (!last)
        {
            return Status::InvalidArgument(path + ": " + canon + " is a " + TypeName(fd) +
                                           ", not a message; it has no field \"" +
                                           (*segments)[i + 1].field + "\"");
        }
        HILO_RETURN_IF_ERROR(SetValue(msg, fd, -1, value, canon));
        return canon;
    }
    return Status::Internal("unreachable: empty override path");
}

} // namespace hilosim
