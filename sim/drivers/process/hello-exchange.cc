#include "sim/drivers/process/hello-exchange.h"

#include "hilo/core/coding.h"

namespace hilosim
{

std::unique_ptr<HelloExchange>
HelloExchange::Listener(HelloOptions options)
{
    return std::unique_ptr<HelloExchange>(new HelloExchange(
        std::move(options), /*dialler=*/false, 0xFFFFFFFFu, State::kAwaitHello, std::string()));
}

std::unique_ptr<HelloExchange>
HelloExchange::Dialler(HelloOptions options, uint32_t peer, std::string remote)
{
    const State state = options.key.empty() ? State::kDone : State::kAwaitChallenge;
    return std::unique_ptr<HelloExchange>(
        new HelloExchange(std::move(options), /*dialler=*/true, peer, state, std::move(remote)));
}

HelloExchange::HelloExchange(HelloOptions options, bool dialler, uint32_t peer, State state,
                             std::string remote)
  : m_options(std::move(options))
  , m_dialler(dialler)
  , m_peer(peer)
  , m_state(state)
  , m_remote(std::move(remote))
{
    if (!m_options.key.empty())
    {
        m_auth = std::make_unique<PeerAuth>(m_options.key);
    }
}

hilo::StatusOr<std::string>
HelloExchange::NewNonce()
{
    return m_options.nonce ? m_options.nonce() : PeerAuth::Nonce();
}

hilo::StatusOr<std::string>
HelloExchange::Start()
{
    std::string hello;
    hilo::ByteWriter(&hello).PutU32(m_options.local_id);
    if (m_auth)
    {
        auto nonce = NewNonce();
        if (!nonce.ok())
        {
            return nonce.status();
        }
        m_localNonce = *nonce;
        hello.append(m_localNonce);
    }
    return hello;
}

hilo::Status
HelloExchange::Fail(const std::string& why)
{
    m_state = State::kFailed;
    return hilo::Status::Corruption(why);
}

hilo::Status
HelloExchange::OnFrame(std::string_view payload, std::vector<std::string>* send)
{
    switch (m_state)
    {
        case State::kAwaitHello:
            return OnHello(payload, send);
        case State::kAwaitProof:
            return OnProof(payload, send);
        case State::kAwaitChallenge:
            return OnChallenge(payload, send);
        case State::kAwaitListenerProof:
            return OnListenerProof(payload);
        case State::kDone:
        case State::kFailed:
            break;
    }
    return Fail("unexpected hello");
}

hilo::Status
HelloExchange::OnHello(std::string_view payload, std::vector<std::string>* send)
{
    const size_t expected = m_auth ? PeerAuth::kHelloBytes : 4;
    hilo::ByteReader r(payload);
    uint32_t id = 0;
    if (payload.size() != expected || !r.GetU32(&id))
    {
        return Fail("malformed hello (" + std::to_string(payload.size()) + " bytes, expected " +
                    std::to_string(expected) +
                    (m_auth ? "; this node requires the shared key)" : ")"));
    }
    if (m_options.accept_peer && !m_options.accept_peer(id))
    {
        return Fail("peer id " + std::to_string(id) + " is not one this node accepts");
    }
    m_peer = id;
    if (!m_auth)
    {
        m_state = State::kDone;
        return hilo::Status::Ok();
    }
    auto nonce = NewNonce();
    if (!nonce.ok())
    {
        return Fail(nonce.status().message());
    }
    m_remoteNonce = std::string(payload.substr(4));
    m_localNonce = *nonce;
    std::string challenge;
    hilo::ByteWriter(&challenge).PutU32(m_options.local_id);
    challenge.append(m_localNonce); // no MAC: this side proves the key only after the dialler
                                    // has (peer-auth.h)
    send->push_back(std::move(challenge));
    m_state = State::kAwaitProof;
    return hilo::Status::Ok();
}

hilo::Status
HelloExchange::OnProof(std::string_view payload, std::vector<std::string>* send)
{
    if (payload.size() != PeerAuth::kProofBytes ||
        !m_auth->Check(payload, PeerAuth::Side::kDialler, m_peer, m_options.local_id, m_remoteNonce,
                       m_localNonce))
    {
        return Fail("authentication failed: the peer claiming id " + std::to_string(m_peer) +
                    " did not prove the shared key");
    }
    // Only now, the dialler having proved the key, does this side prove it in turn.
    auto keys =
        DeriveSessionKeys(m_options.key, m_peer, m_options.local_id, m_remoteNonce, m_localNonce);
    if (!keys.ok())
    {
        return Fail(keys.status().message());
    }
    send->push_back(m_auth->Mac(PeerAuth::Side::kListener, m_peer, m_options.local_id,
                                m_remoteNonce, m_localNonce));
    m_sendKey = keys->listener_to_dialler;
    m_receiveKey = keys->dialler_to_listener;
    m_state = State::kDone;
    return hilo::Status::Ok();
}

hilo::Status
HelloExchange::OnChallenge(std::string_view payload, std::vector<std::string>* send)
{
    hilo::ByteReader r(payload);
    uint32_t listener = 0;
    if (payload.size() != PeerAuth::kChallengeBytes || !r.GetU32(&listener))
    {
        return Fail("malformed challenge (" + std::to_string(payload.size()) + " bytes)");
    }
    if (listener != m_peer)
    {
        return Fail("the node at " + m_remote + " is peer " + std::to_string(listener) +
                    ", not peer " + std::to_string(m_peer));
    }
    m_remoteNonce = std::string(payload.substr(4, PeerAuth::kNonceBytes));
    send->push_back(m_auth->Mac(PeerAuth::Side::kDialler, m_options.local_id, m_peer, m_localNonce,
                                m_remoteNonce));
    m_state = State::kAwaitListenerProof;
    return hilo::Status::Ok();
}

hilo::Status
HelloExchange::OnListenerProof(std::string_view payload)
{
    if (payload.size() != PeerAuth::kProofBytes ||
        !m_auth->Check(payload, PeerAuth::Side::kListener, m_options.local_id, m_peer, m_localNonce,
                       m_remoteNonce))
    {
        return Fail("authentication failed: the node at " + m_remote + " (peer " +
                    std::to_string(m_peer) +
                    ") did not prove the shared key; is its key file the same as this node's?");
    }
    auto keys =
        DeriveSessionKeys(m_options.key, m_options.local_id, m_peer, m_localNonce, m_remoteNonce);
    if (!keys.ok())
    {
        return Fail(keys.status().message());
    }
    m_sendKey = keys->dialler_to_listener;
    m_receiveKey = keys->listener_to_dialler;
    m_state = State::kDone;
    return hilo::Status::Ok();
}

} // namespace hilosim
