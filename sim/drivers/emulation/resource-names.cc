#include "sim/drivers/emulation/resource-names.h"

#include <cctype>

namespace hilosim
{

const char* const kResourcePrefix = "hilo-";
const char* const kLockDir = "/run/hilo-emu";

std::string
RunTag(pid_t pid)
{
    const char* const digits = "0123456789abcdefghijklmnopqrstuvwxyz";
    std::string tag;
    uint64_t v = static_cast<uint64_t>(pid);
    do
    {
        tag.insert(tag.begin(), digits[v % 36]);
        v /= 36;
    } while (v > 0);
    return tag;
}

std::optional<std::string>
TagOf(const std::string& name)
{
    const std::string prefix = kResourcePrefix;
    if (name.rfind(prefix, 0) != 0)
    {
        return std::nullopt;
    }
    const size_t end = name.find('-', prefix.size());
    const std::string tag = name.substr(prefix.size(), end - prefix.size());
    if (tag.empty() || tag.size() > 5 || end == std::string::npos)
    {
        return std::nullopt;
    }
    for (char c : tag)
    {
        if (!std::isdigit(static_cast<unsigned char>(c)) && !(c >= 'a' && c <= 'z'))
        {
            return std::nullopt;
        }
    }
    return tag;
}

std::string
CoreNamespace(const std::string& tag)
{
    return kResourcePrefix + tag + "-core";
}

std::string
HostNamespace(const std::string& tag, NodeRole role, uint32_t index)
{
    switch (role)
    {
        case NodeRole::kLearner:
            return kResourcePrefix + tag + "-learner";
        case NodeRole::kWorker:
            return kResourcePrefix + tag + "-worker-" + std::to_string(index);
        case NodeRole::kRelay:
            return kResourcePrefix + tag + "-relay-" + std::to_string(index);
    }
    return kResourcePrefix + tag + "-unknown";
}

std::string
TapName(const std::string& tag, uint32_t n)
{
    return kResourcePrefix + tag + "-" + std::to_string(n);
}

std::string
LockPath(const std::string& tag)
{
    return std::string(kLockDir) + "/" + kResourcePrefix + tag + ".lock";
}

std::string
NodeName(NodeRole role, uint32_t index)
{
    switch (role)
    {
        case NodeRole::kLearner:
            return "learner";
        case NodeRole::kWorker:
            return "worker " + std::to_string(index);
        case NodeRole::kRelay:
            return "relay " + std::to_string(index);
    }
    return "node";
}

} // namespace hilosim
