#include "sim/net/link-fault-model.h"

#include "ns3/ipv4-header.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/pointer.h"
#include "ns3/ppp-header.h"
#include "ns3/tcp-header.h"

#include <algorithm>
#include <vector>

namespace hilosim
{

NS_LOG_COMPONENT_DEFINE("HiloLinkFaultModel");
NS_OBJECT_ENSURE_REGISTERED(LinkFaultModel);
NS_OBJECT_ENSURE_REGISTERED(CorruptedByteTag);

ns3::TypeId
CorruptedByteTag::GetTypeId()
{
    static ns3::TypeId tid = ns3::TypeId("hilosim::CorruptedByteTag")
                                 .SetParent<ns3::Tag>()
                                 .SetGroupName("Hilo")
                                 .AddConstructor<CorruptedByteTag>();
    return tid;
}

bool
CorruptedByteTag::Within(const ns3::Packet& packet, uint32_t bytes)
{
    ns3::ByteTagIterator it = packet.GetByteTagIterator();
    while (it.HasNext())
    {
        const ns3::ByteTagIterator::Item item = it.Next();
        if (item.GetTypeId() == GetTypeId() && item.GetStart() < bytes && item.GetEnd() > 0)
        {
            return true;
        }
    }
    return false;
}

namespace
{

constexpr uint16_t kPppIpv4 = 0x0021;
constexpr uint8_t kTcpProtocol = 6;
constexpr size_t kTcpChecksumOffset = 16;

uint16_t
Word(const std::vector<uint8_t>& b, size_t at)
{
    const uint16_t hi = b[at];
    const uint16_t lo = at + 1 < b.size() ? b[at + 1] : 0;
    return static_cast<uint16_t>((hi << 8) | lo);
}

// RFC 1624, eqn. 3: HC' = ~(~HC + ~m + m'), in ones' complement arithmetic.
uint16_t
UpdateChecksum(uint16_t checksum, uint16_t old_word, uint16_t new_word)
{
    uint32_t sum = static_cast<uint16_t>(~checksum) + static_cast<uint16_t>(~old_word) + new_word;
    sum = (sum & 0xFFFF) + (sum >> 16);
    sum = (sum & 0xFFFF) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

} // namespace

ns3::TypeId
LinkFaultModel::GetTypeId()
{
    static ns3::TypeId tid =
        ns3::TypeId("hilosim::LinkFaultModel")
            .SetParent<ns3::ErrorModel>()
            .SetGroupName("Hilo")
            .AddConstructor<LinkFaultModel>()
            .AddTraceSource("Corrupted", "A TCP data segment had one payload byte flipped.",
                            ns3::MakeTraceSourceAccessor(&LinkFaultModel::m_corruptedTrace),
                            "hilosim::LinkFaultModel::CorruptedTracedCallback");
    return tid;
}

LinkFaultModel::LinkFaultModel()
  : m_random(ns3::CreateObject<ns3::UniformRandomVariable>())
{
}

LinkFaultModel::~LinkFaultModel() = default;

ns3::Ptr<LinkFaultModel>
LinkFaultModel::InstallOn(ns3::Ptr<ns3::NetDevice> device, int64_t stream)
{
    ns3::PointerValue current;
    device->GetAttribute("ReceiveErrorModel", current);
    ns3::Ptr<ns3::ErrorModel> base = current.Get<ns3::ErrorModel>();
    if (auto existing = ns3::DynamicCast<LinkFaultModel>(base))
    {
        return existing;
    }
    auto model = ns3::CreateObject<LinkFaultModel>();
    model->m_base = base;
    model->m_random->SetStream(stream);
    device->SetAttribute("ReceiveErrorModel", ns3::PointerValue(model));
    return model;
}

void
LinkFaultModel::StartOutage(uint64_t id)
{
    m_active[id] = Active{Kind::kOutage, 1.0, false};
}

void
LinkFaultModel::StartLossBurst(uint64_t id, double rate)
{
    m_active[id] = Active{Kind::kLoss, rate, false};
}

void
LinkFaultModel::StartCorruption(uint64_t id, double rate, bool after_tcp)
{
    m_active[id] = Active{Kind::kCorrupt, rate, after_tcp};
}

void
LinkFaultModel::End(uint64_t id)
{
    m_active.erase(id);
}

void
LinkFaultModel::DoDispose()
{
    m_base = nullptr;
    m_random = nullptr;
    ns3::ErrorModel::DoDispose();
}

void
LinkFaultModel::DoReset()
{
    if (m_base)
    {
        m_base->Reset();
    }
}

bool
LinkFaultModel::DoCorrupt(ns3::Ptr<ns3::Packet> p)
{
    // The link's own loss first, so that it draws exactly as it does without faults.
    if (m_base && m_base->IsCorrupt(p))
    {
        return true;
    }
    if (m_active.empty())
    {
        return false;
    }
    double loss = 0;
    double corrupt = 0;
    bool after_tcp = false;
    for (const auto& [id, a] : m_active)
    {
        if (a.kind == Kind::kOutage)
        {
            ++m_faultDrops;
            return true;
        }
        if (a.kind == Kind::kLoss)
        {
            loss = std::max(loss, a.rate);
        }
        else
        {
            corrupt = std::max(corrupt, a.rate);
            after_tcp = after_tcp || a.after_tcp;
        }
    }
    if (loss > 0 && m_random->GetValue() < loss)
    {
        ++m_faultDrops;
        return true;
    }
    if (corrupt > 0 && m_random->GetValue() < corrupt)
    {
        FlipPayloadByte(p, after_tcp);
    }
    return false;
}

bool
LinkFaultModel::FlipPayloadByte(ns3::Ptr<ns3::Packet> p, bool after_tcp)
{
    // Find the TCP payload: PPP header, IPv4 header, TCP header (with options).
    ns3::Ptr<ns3::Packet> copy = p->Copy();
    ns3::PppHeader ppp;
    if (copy->RemoveHeader(ppp) == 0 || ppp.GetProtocol() != kPppIpv4)
    {
        return false;
    }
    ns3::Ipv4Header ip;
    if (copy->RemoveHeader(ip) == 0 || ip.GetProtocol() != kTcpProtocol ||
        ip.GetFragmentOffset() != 0 || !ip.IsLastFragment())
    {
        return false;
    }
    ns3::TcpHeader tcp;
    const uint32_t tcp_header = copy->RemoveHeader(tcp);
    const uint32_t payload = copy->GetSize();
    if (tcp_header == 0 || payload == 0)
    {
        return false; // a pure ACK, SYN or FIN
    }
    const size_t tcp_start = ppp.GetSerializedSize() + ip.GetSerializedSize();
    const size_t payload_start = tcp_start + tcp_header;

    std::vector<uint8_t> bytes(p->GetSize());
    p->CopyData(bytes.data(), static_cast<uint32_t>(bytes.size()));
    const size_t at = payload_start + m_random->GetInteger(0, payload - 1);
    const uint8_t mask = static_cast<uint8_t>(1u << m_random->GetInteger(0, 7));
    const size_t word = tcp_start + ((at - tcp_start) & ~size_t{1});
    const uint16_t before = Word(bytes, word);
    bytes[at] ^= mask;
    if (after_tcp && ns3::Node::ChecksumEnabled())
    {
        // Keep the TCP checksum valid: the damage passes TCP unnoticed.
        const size_t cs = tcp_start + kTcpChecksumOffset;
        const uint16_t patched = UpdateChecksum(Word(bytes, cs), before, Word(bytes, word));
        bytes[cs] = static_cast<uint8_t>(patched >> 8);
        bytes[cs + 1] = static_cast<uint8_t>(patched & 0xFF);
    }
    auto damaged = ns3::Create<ns3::Packet>(bytes.data(), static_cast<uint32_t>(bytes.size()));
    if (after_tcp)
    {
        damaged->AddByteTag(CorruptedByteTag(), static_cast<uint32_t>(at),
                            static_cast<uint32_t>(at + 1));
    }
    p->RemoveAtEnd(p->GetSize());
    p->AddAtEnd(damaged);
    ++m_corrupted;
    m_corruptedTrace(payload, after_tcp);
    NS_LOG_INFO("flipped bit mask " << int(mask) << " of payload byte " << (at - payload_start)
                                    << " of " << payload << (after_tcp ? " after TCP" : ""));
    return true;
}

} // namespace hilosim
