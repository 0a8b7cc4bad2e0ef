#include "sim/net/cubic-window.h"

#include <algorithm>
#include <cmath>

namespace hilosim
{

namespace
{
// beta_scale = 8 (BICTCP_BETA_SCALE + beta) / 3 / (BICTCP_BETA_SCALE - beta), integer as in Linux:
// the Reno estimate grows by one per (cwnd x 15) / 8 ACKed segments.
constexpr uint32_t kRenoScale = 8 * (CubicWindow::kBetaScale + CubicWindow::kBeta) / 3 /
                                (CubicWindow::kBetaScale - CubicWindow::kBeta);
static_assert(kRenoScale == 15, "Linux's beta_scale for beta 717");
// Linux recomputes cnt at most every HZ / 32 jiffies while cwnd is unchanged (HZ = 1000).
const ns3::Time kRecompute = ns3::MilliSeconds(1000 / 32);
} // namespace

void
CubicWindow::Reset()
{
    *this = CubicWindow();
}

void
CubicWindow::OnSendAfterIdle(ns3::Time now, ns3::Time idle)
{
    if (!m_epochOn || !idle.IsStrictlyPositive())
    {
        return;
    }
    m_epochStart = std::min(m_epochStart + idle, now);
}

uint32_t
CubicWindow::OnLoss(uint32_t cwnd)
{
    m_epochOn = false;
    m_cwndCount = 0; // tcp_init_cwnd_reduction / tcp_enter_loss
    // Fast convergence: below the previous W_max the flow releases bandwidth for newcomers.
    if (cwnd < m_lastMaxCwnd)
    {
        m_lastMaxCwnd = cwnd * (kBetaScale + kBeta) / (2 * kBetaScale);
    }
    else
    {
        m_lastMaxCwnd = cwnd;
    }
    return std::max(cwnd * kBeta / kBetaScale, 2u);
}

void
CubicWindow::Update(ns3::Time now, uint32_t cwnd, uint32_t acked, ns3::Time delayMin)
{
    m_ackCount += acked;
    if (m_lastCwnd == cwnd && now - m_lastTime <= kRecompute)
    {
        return; // cnt as computed less than 1/32 s ago, Reno estimate included
    }
    // Within the same millisecond (Linux's jiffy) only the Reno estimate is brought up to date.
    if (!m_epochOn || now - m_lastTime >= ns3::MilliSeconds(1))
    {
        m_lastCwnd = cwnd;
        m_lastTime = now;
        if (!m_epochOn)
        {
            m_epochOn = true;
            m_epochStart = now;
            m_ackCount = acked;
            m_renoCwnd = cwnd;
            if (m_lastMaxCwnd <= cwnd)
            {
                m_k = 0;
                m_originPoint = cwnd;
            }
            else
            {
                m_k = std::cbrt((m_lastMaxCwnd - cwnd) / kC);
                m_originPoint = m_lastMaxCwnd;
            }
        }
        const double t = (now - m_epochStart + delayMin).GetSeconds();
        const double offs = std::abs(t - m_k);
        const auto delta = static_cast<uint32_t>(kC * offs * offs * offs);
        const uint32_t target =
            t < m_k ? (delta < m_originPoint ? m_originPoint - delta : 0) : m_originPoint + delta;
        m_cnt = target > cwnd ? cwnd / (target - cwnd) : 100 * cwnd;
        if (m_lastMaxCwnd == 0 && m_cnt > 20)
        {
            m_cnt = 20; // before the first loss: at least 5% per round trip
        }
    }
    // TCP friendliness: never slower than Reno would be.
    const uint32_t perSegment = std::max(1u, cwnd * kRenoScale / 8);
    while (m_ackCount > perSegment)
    {
        m_ackCount -= perSegment;
        ++m_renoCwnd;
    }
    if (m_renoCwnd > cwnd)
    {
        m_cnt = std::min(m_cnt, cwnd / (m_renoCwnd - cwnd));
    }
    m_cnt = std::max(m_cnt, 2u);
}

uint32_t
CubicWindow::OnAck(ns3::Time now, uint32_t cwnd, uint32_t acked, ns3::Time delayMin)
{
    Update(now, cwnd, acked, delayMin);
    // tcp_cong_avoid_ai(tp, cnt, acked)
    if (m_cwndCount >= m_cnt)
    {
        m_cwndCount = 0;
        ++cwnd;
    }
    m_cwndCount += acked;
    if (m_cwndCount >= m_cnt)
    {
        const uint32_t delta = m_cwndCount / m_cnt;
        m_cwndCount -= delta * m_cnt;
        cwnd += delta;
    }
    return cwnd;
}

} // namespace hilosim
