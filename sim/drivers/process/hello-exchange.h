// HelloExchange: one end of a TcpTransport connection's hello, without the socket. Its input is
// the payload of each hello-type frame the peer sends; its output is the payloads of the hello
// frames to send back, and, once it is done, who the peer is and the session keys that seal
// everything after it (record-cipher.h). The exchange itself (who sends what, in which order, and
// why the listener proves the key only after the dialler has) is specified in peer-auth.h; without
// a key the hello is the dialler's u32 id alone and nothing is sealed.
//
// Any frame that does not fit the state (a malformed hello or challenge, an id the listener does
// not accept, a listener that is not the peer dialled, a proof that fails, a frame after the
// exchange is done) fails the exchange: OnFrame returns why, the exchange is kFailed for good, and
// the connection is to be closed without anything more sent.
#ifndef HILOSIM_DRIVERS_PROCESS_HELLO_EXCHANGE_H
#define HILOSIM_DRIVERS_PROCESS_HELLO_EXCHANGE_H

#include "sim/drivers/process/peer-auth.h"
#include "sim/drivers/process/record-cipher.h"

#include "hilo/core/status.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hilosim
{

struct HelloOptions
{
    uint32_t local_id{0};
    std::string key;                           // the shared key; empty: the plain hello
    std::function<bool(uint32_t)> accept_peer; // listener: ids it accepts; empty: any
    /// Fresh nonces (PeerAuth::kNonceBytes); empty: PeerAuth::Nonce (OpenSSL's generator).
    std::function<hilo::StatusOr<std::string>()> nonce;
};

class HelloExchange
{
  public:
    enum class State
    {
        kAwaitHello,         // listener: waiting for the dialler's hello
        kAwaitProof,         // listener, key: challenge sent, waiting for the dialler's proof
        kAwaitChallenge,     // dialler, key: hello sent, waiting for the listener's challenge
        kAwaitListenerProof, // dialler, key: proof sent, waiting for the listener's proof
        kDone,               // messages flow (sealed, with a key)
        kFailed,             // the connection is to be closed
    };

    /// The accepting end, waiting for a hello.
    static std::unique_ptr<HelloExchange> Listener(HelloOptions options);
    /// The dialling end towards `peer`; `remote` (the address dialled) names it in errors.
    /// Start() gives its hello.
    static std::unique_ptr<HelloExchange> Dialler(HelloOptions options, uint32_t peer,
                                                  std::string remote);

    /// Dialler: the hello to send first (with a key: done only once the listener proved it;
    /// without: done now). Internal when no nonce can be drawn.
    hilo::StatusOr<std::string> Start();
    /// The peer's next hello-type payload; appends the payloads to send, in order, to `*send`.
    /// The reason the exchange failed otherwise (then kFailed).
    hilo::Status OnFrame(std::string_view payload, std::vector<std::string>* send);

    State state() const { return m_state; }
    bool done() const { return m_state == State::kDone; }
    bool dialler() const { return m_dialler; }
    bool keyed() const { return m_auth != nullptr; }
    /// The peer's id (the dialler's from its hello; the listener's as dialled).
    uint32_t peer() const { return m_peer; }
    /// Once done with a key: this side's send and receive keys (RecordFormat::kKeyBytes each);
    /// empty otherwise.
    const std::string& send_key() const { return m_sendKey; }
    const std::string& receive_key() const { return m_receiveKey; }

  private:
    HelloExchange(HelloOptions options, bool dialler, uint32_t peer, State state,
                  std::string remote);
    hilo::Status OnHello(std::string_view payload, std::vector<std::string>* send);
    hilo::Status OnProof(std::string_view payload, std::vector<std::string>* send);
    hilo::Status OnChallenge(std::string_view payload, std::vector<std::string>* send);
    hilo::Status OnListenerProof(std::string_view payload);
    hilo::Status Fail(const std::string& why);
    hilo::StatusOr<std::string> NewNonce();
    void Seal(const SessionKeys& keys);

    HelloOptions m_options;
    std::unique_ptr<PeerAuth> m_auth; // null without a key
    bool m_dialler;
    uint32_t m_peer;
    State m_state;
    std::string m_remote;
    std::string m_localNonce;
    std::string m_remoteNonce;
    std::string m_sendKey;
    std::string m_receiveKey;
};

} // namespace hilosim

#endif // HILOSIM_DRIVERS_PROCESS_HELLO_EXCHANGE_H
