#include "sim/drivers/process/node-network.h"

namespace hilosim
{
namespace
{

const char* const kLoopback = "127.0.0.1";

class DirectNetwork : public NodeNetwork
{
  public:
    std::string Name() const override { return "direct"; }
    hilo::Status Prepare() override { return hilo::Status::Ok(); }
    hilo::Status StartArm(const std::string&) override { return hilo::Status::Ok(); }
    std::string ListenAddress(NodeRole, uint32_t) const override
    {
        return std::string(kLoopback) + ":0";
    }
    std::string LearnerHostForWorker(uint32_t) const override { return kLoopback; }
    std::string RelayHostForWorker(uint32_t) const override { return kLoopback; }
    std::string LearnerHostForRelay(uint32_t) const override { return kLoopback; }
    std::vector<std::string> Command(NodeRole, uint32_t,
                                     std::vector<std::string> argv) const override
    {
        return argv;
    }
    hilo::Status Check() override { return hilo::Status::Ok(); }
    hilo::Status FinishArm(ArmResult*) override { return hilo::Status::Ok(); }
};

} // namespace

std::unique_ptr<NodeNetwork>
NewDirectNetwork()
{
    return std::make_unique<DirectNetwork>();
}

} // namespace hilosim
