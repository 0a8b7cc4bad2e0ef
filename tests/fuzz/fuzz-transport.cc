// libFuzzer target: the socket-free pieces of the process transport (sim/drivers/process/): the
// inbound frame reader with its limits, the hello exchange on both ends with and without a key,
// the record layer's open path, and admission. The input layout is in transport-input.h.
// Invariants:
// - FrameReader: never more payload memory than the bytes that arrived plus one step (a header
//   announcing 2 GiB costs nothing); a frame given out is whole, within its limits and its CRC;
//   a refused stream stays refused (it closes) and asks for no more bytes;
// - HelloExchange: a failed end stays failed and sends nothing more; with a key, an end is done
//   only on a frame its honest peer made (its proof), and two ends both done hold crossed keys;
// - records: what opens is exactly the honest plaintext before the first tampered record; after
//   a failure nothing more opens.
// - admission: a full node refuses, a full cap evicts an existing pending connection (of the
//   same source when that cap is the per-source one).
#include "tests/fuzz/fuzz-fixture.h"
#include "tests/fuzz/transport-input.h"

#include "sim/drivers/process/admission.h"
#include "sim/drivers/process/frame-reader.h"
#include "sim/drivers/process/hello-exchange.h"
#include "sim/drivers/process/record-cipher.h"

#include "hilo/core/crc32c.h"

#include <algorithm>
#include <cstring>
#include <deque>

namespace
{

using hilosim::FrameHeader;
using hilosim::FrameReader;
namespace fuzz = hilo::fuzz;

/// Feeds `bytes` to `reader` in reads of at most the size it asks for, checking the reader's
/// invariants after each. False once the reader refused the stream.
bool
Feed(FrameReader& reader, std::string_view bytes, const hilosim::FrameReaderOptions& o)
{
    while (!bytes.empty())
    {
        const FrameReader::Span span = reader.Buffer();
        if (!reader.error().ok())
        {
            if (span.size != 0)
                fuzz::Fail("a refused stream asks for more bytes");
            return false;
        }
        if (span.size == 0)
            fuzz::Fail("a live reader asks for no bytes");
        const size_t n = std::min(span.size, bytes.size());
        std::memcpy(span.data, bytes.data(), n);
        bytes.remove_prefix(n);
        const FrameReader::Event e = reader.Commit(n);
        if (reader.payload_allocated_bytes() >
            reader.payload_arrived_bytes() + o.payload_step_bytes)
        {
            fuzz::Fail("payload memory beyond the bytes that arrived plus one step");
        }
        if (e == FrameReader::Event::kError)
        {
            if (reader.error().ok() || reader.Commit(1) != FrameReader::Event::kError)
                fuzz::Fail("a refused stream is not refused for good");
            return false;
        }
        if (e != FrameReader::Event::kFrame)
            continue;
        const FrameHeader& h = reader.header();
        const bool hello = h.type == FrameHeader::kHelloType;
        const std::string payload = reader.TakePayload();
        if (payload.size() != h.payload_bytes || h.wire_bytes < h.payload_bytes ||
            hilo::Crc32c(payload.data(), payload.size()) != h.payload_crc)
        {
            fuzz::Fail("a frame given out is not whole or fails its CRC");
        }
        if (hello != !reader.hello_done() ||
            (hello && (h.payload_bytes > FrameReader::kMaxHelloPayloadBytes ||
                       h.wire_bytes != h.payload_bytes)) ||
            (!hello && (h.payload_bytes > o.max_payload_bytes ||
                        (o.max_payload_for && h.payload_bytes > o.max_payload_for(h.type)))))
        {
            fuzz::Fail("a frame given out is past its limits");
        }
        if (hello)
            reader.set_hello_done(true); // as a plain listener is after one hello
    }
    return true;
}

void
Frames(uint8_t mode, const std::vector<std::string>& chunks)
{
    hilosim::FrameReaderOptions o;
    o.max_payload_bytes = 4096;
    if (mode & fuzz::kTransportTypeLimits)
        o.max_payload_for = [](uint32_t type) { return (type % 7) * 9; };
    o.payload_step_bytes = 1 + (mode >> 4);
    FrameReader reader(o);
    reader.set_hello_done(mode & fuzz::kTransportHelloDone);
    for (const std::string& chunk : chunks)
    {
        if (!Feed(reader, chunk, o))
            return;
    }
}

/// Deterministic nonces: 16 bytes of a counter and a side tag.
std::function<hilo::StatusOr<std::string>()>
Nonces(char side)
{
    auto n = std::make_shared<uint8_t>(0);
    return [n, side]() -> hilo::StatusOr<std::string>
    { return std::string(15, side) + static_cast<char>((*n)++); };
}

struct End
{
    std::unique_ptr<hilosim::HelloExchange> x;
    std::deque<std::string> outbox; // frames this end sent, not yet handed over
    std::vector<std::string> made;  // every frame this end made
};

/// Hands `frame` to `to` (made by `from` when honest) and checks the exchange's invariants.
void
Hand(End& to, const End& from, const std::string& frame, bool keyed)
{
    using State = hilosim::HelloExchange::State;
    const State before = to.x->state();
    std::vector<std::string> send;
    const hilo::Status s = to.x->OnFrame(frame, &send);
    if (s.ok() == (to.x->state() == State::kFailed))
        fuzz::Fail("a hello step's status and state disagree");
    if (!s.ok() && !send.empty())
        fuzz::Fail("a failed hello step sends something");
    if (before == State::kFailed && s.ok())
        fuzz::Fail("a failed exchange took a frame");
    if (keyed && before != State::kDone && to.x->done() && !to.x->dialler() &&
        std::find(from.made.begin(), from.made.end(), frame) == from.made.end())
    {
        fuzz::Fail("a keyed listener is done on a frame its dialler never made");
    }
    if (keyed && before != State::kDone && to.x->done() && to.x->dialler() &&
        std::find(from.made.begin(), from.made.end(), frame) == from.made.end())
    {
        fuzz::Fail("a keyed dialler is done on a frame its listener never made");
    }
    for (std::string& f : send)
    {
        to.made.push_back(f);
        to.outbox.push_back(std::move(f));
    }
}

void
Hello(uint8_t mode, const std::vector<std::string>& chunks)
{
    const bool keyed = mode & fuzz::kTransportKeyed;
    hilosim::HelloOptions lo;
    lo.local_id = fuzz::kTransportListenerId;
    lo.key = keyed ? fuzz::TransportRunKey() : "";
    lo.accept_peer = [](uint32_t id) { return id < 50; };
    lo.nonce = Nonces('l');
    hilosim::HelloOptions dopt = lo;
    dopt.local_id = fuzz::kTransportDiallerId;
    dopt.accept_peer = nullptr;
    dopt.nonce = Nonces('d');
    End l{hilosim::HelloExchange::Listener(lo), {}, {}};
    End d{hilosim::HelloExchange::Dialler(dopt, fuzz::kTransportListenerId, "fuzz"), {}, {}};
    auto hello = d.x->Start();
    if (!hello.ok())
        fuzz::Fail("a dialler's hello fails with a working nonce source");
    d.made.push_back(*hello);
    d.outbox.push_back(*hello);
    for (const std::string& c : chunks)
    {
        if (c.empty())
            continue;
        const uint8_t a = static_cast<uint8_t>(c[0]);
        const bool to_listener = a % 2 == 0;
        End& to = to_listener ? l : d;
        End& from = to_listener ? d : l;
        std::string frame;
        if (a % 4 < 2)
        {
            if (from.outbox.empty())
                continue;
            frame = from.outbox.front();
            from.outbox.pop_front();
            if ((a & 4) && c.size() > 1 && !frame.empty())
                frame[static_cast<uint8_t>(c[1]) % frame.size()] ^= 1 << ((a >> 3) % 8);
        }
        else
        {
            frame = c.substr(1);
        }
        Hand(to, from, frame, keyed);
    }
    if (l.x->done() && d.x->done())
    {
        if (l.x->peer() != fuzz::kTransportDiallerId && keyed)
            fuzz::Fail("a keyed listener is done with a peer that is not its dialler");
        if (l.x->send_key() != d.x->receive_key() || l.x->receive_key() != d.x->send_key() ||
            (keyed && l.x->send_key().size() != hilosim::RecordFormat::kKeyBytes))
        {
            fuzz::Fail("two ends done hold keys that do not cross");
        }
    }
}

void
Records(const std::vector<std::string>& chunks)
{
    using hilosim::RecordFormat;
    hilosim::RecordSealer sealer(fuzz::TransportRecordKey());
    std::string stream;
    std::string honest;                     // plaintext of the records before the first tamper
    size_t tampered_at = std::string::npos; // stream offset of the first tampered byte
    for (const std::string& c : chunks)
    {
        if (c.empty())
            continue;
        const uint8_t a = static_cast<uint8_t>(c[0]);
        const std::string plain = c.substr(1);
        if (a % 4 == 3)
        {
            if (tampered_at == std::string::npos && !plain.empty())
                tampered_at = stream.size();
            stream += plain;
            continue;
        }
        std::string record;
        if (plain.empty() || !sealer.Seal(plain, &record).ok())
            continue;
        if (a % 4 == 2)
        {
            if (tampered_at == std::string::npos)
                tampered_at = stream.size(); // the next record is out of sequence
            continue;
        }
        if (a % 4 == 1)
        {
            const size_t at = static_cast<uint8_t>(c[1]) % record.size();
            record[at] ^= 1 << ((a >> 3) % 8);
            if (tampered_at == std::string::npos)
                tampered_at = stream.size();
        }
        if (tampered_at == std::string::npos)
            honest += plain;
        stream += record;
    }
    // Opened in order, as the record stream does.
    hilosim::RecordOpener opener(fuzz::TransportRecordKey());
    hilosim::FrameReaderOptions o;
    o.payload_step_bytes = 64;
    FrameReader reader(o);
    reader.set_hello_done(true);
    std::string opened;
    size_t at = 0;
    bool failed = false;
    while (stream.size() - at >= RecordFormat::kHeaderBytes)
    {
        const std::string_view header(stream.data() + at, RecordFormat::kHeaderBytes);
        auto body = opener.BodyBytes(header);
        if (!body.ok())
        {
            failed = true;
            break;
        }
        if (stream.size() - at - RecordFormat::kHeaderBytes < *body)
            break; // cut short: waits for the rest
        std::string plain;
        const hilo::Status s = opener.Open(
            header, std::string_view(stream.data() + at + RecordFormat::kHeaderBytes, *body),
            &plain);
        if (!s.ok())
        {
            if (!plain.empty())
                fuzz::Fail("a record that fails gives out bytes");
            failed = true;
            break;
        }
        opened += plain;
        Feed(reader, plain, o);
        at += RecordFormat::kHeaderBytes + *body;
    }
    if (opened.size() > honest.size() || honest.compare(0, opened.size(), opened) != 0)
        fuzz::Fail("opened plaintext that is not the honest records' own");
    if (tampered_at == std::string::npos && !failed && opened != honest)
        fuzz::Fail("an untouched stream does not open to its plaintext");
    if (failed)
    {
        std::string plain;
        if (opener.Open(std::string(4, '\0'), std::string(16, '\0'), &plain).ok() ||
            opener.BodyBytes(std::string("\1\0\0\0", 4)).ok())
        {
            fuzz::Fail("an opener that failed opens again");
        }
    }
}

void
Admission(std::string_view bytes)
{
    if (bytes.size() < 5)
        return;
    hilosim::AdmissionLimits limits;
    limits.max_connections = static_cast<uint8_t>(bytes[0]) % 8;
    limits.max_pending_hellos = static_cast<uint8_t>(bytes[1]) % 8;
    limits.max_pending_per_source = static_cast<uint8_t>(bytes[2]) % 8;
    const size_t members = static_cast<uint8_t>(bytes[3]) % 10;
    const std::string source(1, static_cast<char>('a' + bytes[4] % 3));
    std::vector<std::string> pending;
    for (char c : bytes.substr(5, 16))
        pending.emplace_back(1, static_cast<char>('a' + static_cast<uint8_t>(c) % 3));
    const hilosim::AdmissionDecision d = DecideAdmission(members, pending, source, limits);
    const size_t from_source = std::count(pending.begin(), pending.end(), source);
    const bool source_full = from_source >= limits.max_pending_per_source;
    const bool all_full = pending.size() >= limits.max_pending_hellos ||
                          members + pending.size() >= limits.max_connections;
    if (d.refuse != (members >= limits.max_connections))
        fuzz::Fail("refused a connection with room for members, or admitted one past the cap");
    if (d.refuse)
        return;
    if (d.evict && d.evict_index >= pending.size())
        fuzz::Fail("evicted a connection that is not pending");
    if (source_full && from_source > 0 && (!d.evict || pending[d.evict_index] != source))
        fuzz::Fail("a full source did not make room from its own connections");
    if (!source_full && all_full && !pending.empty() && (!d.evict || d.evict_index != 0))
        fuzz::Fail("a full node did not drop its oldest pending connection");
    if (!source_full && !all_full && d.evict)
        fuzz::Fail("evicted a connection with room to spare");
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t mode = data[0];
    const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (static_cast<fuzz::TransportMode>(mode & 3))
    {
        case fuzz::TransportMode::kFrames:
            Frames(mode, fuzz::SplitChunks(rest, 256));
            break;
        case fuzz::TransportMode::kHello:
            Hello(mode, fuzz::SplitChunks(rest, 64));
            break;
        case fuzz::TransportMode::kRecords:
            Records(fuzz::SplitChunks(rest, 64));
            break;
        case fuzz::TransportMode::kAdmission:
            Admission(rest);
            break;
    }
    return 0;
}
