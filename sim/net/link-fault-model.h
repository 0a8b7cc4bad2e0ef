// LinkFaultModel: the faults a link can suffer, as an ns-3 receive error model on each of its
// devices: an outage (every packet lost), a loss burst (packets lost at a rate) and corruption
// (one payload byte of a TCP data segment flipped at a rate). It wraps the link's own loss model
// (LinkSpec::loss_rate), which keeps drawing exactly as it would without faults, so that packets
// the faults leave alone see the same losses.
//
// Corruption flips a byte of the TCP payload only (never a PPP, IP or TCP header byte, which would
// test ns-3's header parsing rather than the protocol). With ns-3 checksums on (GlobalValue
// "ChecksumEnabled"), TCP drops such a segment as a real host would, and the sender retransmits
// it. An `after_tcp` corruption also patches the TCP checksum (RFC 1624 incremental update), so the
// damaged bytes reach the application as a fault between TCP and the application would deliver
// them; the message frames' own checks must then catch it (sim/net/message-frame.h). A flipped
// byte of virtual padding (message-frame.h) stands for a real byte a CRC over the whole payload
// would catch: it carries a CorruptedByteTag, which the receiver treats as that CRC failing.
#ifndef HILO_SIM_NET_LINK_FAULT_MODEL_H
#define HILO_SIM_NET_LINK_FAULT_MODEL_H

#include "ns3/error-model.h"
#include "ns3/net-device.h"
#include "ns3/ptr.h"
#include "ns3/random-variable-stream.h"
#include "ns3/tag.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <map>

namespace hilosim
{

/// Marks a byte a fault damaged after TCP; travels with the byte through TCP's buffers (an ns-3
/// byte tag). See MessageReassembler (message-frame.h).
class CorruptedByteTag : public ns3::Tag
{
  public:
    static ns3::TypeId GetTypeId();
    ns3::TypeId GetInstanceTypeId() const override { return GetTypeId(); }
    uint32_t GetSerializedSize() const override { return 1; }
    void Serialize(ns3::TagBuffer buffer) const override { buffer.WriteU8(1); }
    void Deserialize(ns3::TagBuffer buffer) override { buffer.ReadU8(); }
    void Print(std::ostream& os) const override { os << "corrupted"; }

    /// True when one of the first `bytes` bytes of `packet` carries the tag.
    static bool Within(const ns3::Packet& packet, uint32_t bytes);
};

class LinkFaultModel : public ns3::ErrorModel
{
  public:
    static ns3::TypeId GetTypeId();
    LinkFaultModel();
    ~LinkFaultModel() override;

    /// Installs a LinkFaultModel on `device`, wrapping the error model it has (if any), or
    /// returns the one already installed there. Its random stream is `stream`.
    static ns3::Ptr<LinkFaultModel> InstallOn(ns3::Ptr<ns3::NetDevice> device, int64_t stream);

    /// Starts fault `id` (ids are the caller's, unique per active fault): an outage, a loss
    /// burst at `rate`, or corruption at `rate` (after_tcp: invisible to TCP). Overlapping faults
    /// combine: any outage drops everything; the highest active loss rate applies; the highest
    /// corruption rate applies, after TCP if any active corruption is.
    void StartOutage(uint64_t id);
    void StartLossBurst(uint64_t id, double rate);
    void StartCorruption(uint64_t id, double rate, bool after_tcp);
    /// Ends fault `id` (no-op when it is not active).
    void End(uint64_t id);

    /// Packets this model dropped for a fault, and segments it corrupted.
    uint64_t GetFaultDrops() const { return m_faultDrops; }
    uint64_t GetCorrupted() const { return m_corrupted; }

    typedef void (*CorruptedTracedCallback)(uint32_t payloadBytes, bool afterTcp);

  protected:
    void DoDispose() override;

  private:
    bool DoCorrupt(ns3::Ptr<ns3::Packet> p) override;
    void DoReset() override;
    /// Flips one payload byte of a TCP data segment; false when `p` carries no TCP payload.
    bool FlipPayloadByte(ns3::Ptr<ns3::Packet> p, bool after_tcp);

    enum class Kind
    {
        kOutage,
        kLoss,
        kCorrupt,
    };
    struct Active
    {
        Kind kind;
        double rate;
        bool after_tcp;
    };

    ns3::Ptr<ns3::ErrorModel> m_base; // the link's own loss model, or null
    ns3::Ptr<ns3::UniformRandomVariable> m_random;
    std::map<uint64_t, Active> m_active;
    uint64_t m_faultDrops{0};
    uint64_t m_corrupted{0};
    ns3::TracedCallback<uint32_t, bool> m_corruptedTrace;
};

} // namespace hilosim

#endif // HILO_SIM_NET_LINK_FAULT_MODEL_H
