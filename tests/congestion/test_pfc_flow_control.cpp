// The PFC state machine on its own, without a network: one switch between two hosts, priority 3
// lossless with a static XOFF threshold of 100 000 B, an XON offset of 10 000 B and a headroom
// of 20 000 B (explicit settings, so every value below is the arithmetic of IEEE 802.1Qbb's
// thresholds done by hand in the comments), then a pause of a host's egress, its paused time,
// a watchdog storm and the state exchange of one node.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "congestion/pfc_flow_control.hpp"

using namespace fabricsim;

namespace {

using Ingress = PfcFlowControl::Ingress;

// Nodes: 0 = switch "sw", 1 = host "h0" (host 0), 2 = host "h1" (host 1).
// Ports: 0 = sw -> h0, 1 = sw -> h1, 2 = h0 -> sw, 3 = h1 -> sw.
PfcFlowControl::Setup fabric(const std::vector<BufferMmu>& mmus) {
  PfcFlowControl::Setup s;
  s.node_names = {"sw", "h0", "h1"};
  s.is_switch = {1, 0, 0};
  s.host_of_node = {-1, 0, 1};
  s.host_node = {1, 2};
  s.first_port = {0, 2, 3, 4};
  const int64_t rate = 100'000'000'000, delay = 1'000;
  s.ports = {{0, 1, 2, 0, rate, delay, false},
             {0, 2, 3, 1, rate, delay, false},
             {1, 0, 0, 0, rate, delay, true},
             {2, 0, 1, 0, rate, delay, true}};
  PfcSwitchSettings pfc;
  pfc.enabled = true;
  pfc.lossless_mask = 1u << 3;
  pfc.xoff_bytes = 100'000;
  pfc.xon_offset_bytes = 10'000;
  pfc.headroom_bytes = 20'000;
  s.settings = {pfc, PfcSwitchSettings{}, PfcSwitchSettings{}};
  s.mmus = &mmus;
  s.static_buffer = true;
  s.buffer_per_port_bytes = 1'000'000;  // >= xoff + headroom: accepted
  s.mtu_frame_bytes = 1'082;
  s.data_tc = 3;
  return s;
}

std::vector<BufferMmu> buffers() {
  return {BufferMmu::static_per_port(1'000'000), BufferMmu{}, BufferMmu{}};
}

}  // namespace

TEST_CASE("PFC ingress: XOFF at the threshold and XON at threshold minus the offset") {
  const std::vector<BufferMmu> mmus = buffers();
  PfcFlowControl pfc;
  pfc.setup(fabric(mmus));
  const BufferMmu& mmu = mmus[0];
  CHECK(pfc.lossless(0, 3));
  CHECK_FALSE(pfc.lossless(0, 2));
  CHECK(pfc.headroom_bytes(0) == 20'000);
  CHECK(pfc.xoff_bytes(0) == 100'000);
  CHECK(pfc.account(0, 3, 60'000, mmu) == Ingress::kNone);  // 60 000 < 100 000
  CHECK(pfc.account(0, 3, 40'000, mmu) == Ingress::kXoff);  // 100 000 reaches it
  CHECK(pfc.assert_xoff(0, 3) == 100'000);
  CHECK(pfc.xoff_mask(0) == 0x08);
  REQUIRE(pfc.frame_pending(0));
  const PfcFlowControl::Frame xoff = pfc.take_frame(0);
  CHECK(xoff.enable == 0x08);
  CHECK(xoff.xoff == 0x08);
  CHECK(xoff.quanta == kMaxPauseQuanta);
  CHECK_FALSE(pfc.frame_pending(0));
  CHECK(pfc.arm_refresh(0, xoff.xoff));
  CHECK_FALSE(pfc.arm_refresh(0, xoff.xoff));  // one refresh pending at a time
  // Headroom: XOFF level 100 000 + 20 000; a frame up to it fits, one byte more does not.
  CHECK_FALSE(pfc.headroom_overflow(0, 3, 20'000, mmu));
  CHECK(pfc.headroom_overflow(0, 3, 20'001, mmu));
  // XON at 100 000 - 10 000 = 90 000 B.
  CHECK(pfc.account(0, 3, -5'000, mmu) == Ingress::kMaybeXon);
  CHECK_FALSE(pfc.try_xon(0, 3, mmu));  // 95 000 > 90 000
  CHECK(pfc.account(0, 3, -5'000, mmu) == Ingress::kMaybeXon);
  CHECK(pfc.try_xon(0, 3, mmu));  // 90 000 <= 90 000
  CHECK(pfc.xoff_mask(0) == 0);
  const PfcFlowControl::Frame xon = pfc.take_frame(0);
  CHECK(xon.enable == 0x08);
  CHECK(xon.xoff == 0);
  CHECK_FALSE(pfc.refresh(0));  // XOFF is over: no refresh
  CHECK(pfc.ingress_bytes(0, 3) == 90'000);
  CHECK(pfc.peak_lossless_in_bytes(0) == 100'000);
}

TEST_CASE("PFC egress: a pause holds the class and its time counts for the host") {
  const std::vector<BufferMmu> mmus = buffers();
  PfcFlowControl pfc;
  pfc.setup(fabric(mmus));
  const PfcFlowControl::Paused first = pfc.pause(2, 3, 1'000'000, 100);
  CHECK(first.started);
  CHECK(first.arm_timer);
  CHECK(pfc.held(2) == 0x08);
  const PfcFlowControl::Paused again = pfc.pause(2, 3, 2'000'000, 200);  // extended
  CHECK_FALSE(again.started);
  CHECK_FALSE(again.arm_timer);
  CHECK(pfc.paused_until_ps(2, 3) == 2'000'000);
  pfc.expiry_fired(2);
  int64_t counted = 0;
  REQUIRE(pfc.resume(2, 3, 600'100, counted));
  CHECK(counted == 600'000);  // [100, 600 100)
  CHECK(pfc.held(2) == 0);
  CHECK_FALSE(pfc.resume(2, 3, 600'200, counted));  // not paused
  CHECK(pfc.host_paused_ps(0, 0, 1'000'000, 700'000) == 600'000);
  CHECK(pfc.host_paused_ps(0, 300'100, 1'000'000, 700'000) == 300'000);
  CHECK(pfc.host_paused_ps(1, 0, 1'000'000, 700'000) == 0);
}

TEST_CASE("PFC watchdog storm: the pause is ignored and its time stops counting") {
  const std::vector<BufferMmu> mmus = buffers();
  PfcFlowControl pfc;
  pfc.setup(fabric(mmus));
  pfc.pause(0, 3, 5'000'000, 1'000);
  CHECK(pfc.storm(0, 3, 1'500) == 500);  // paused 1 000 .. 1 500
  CHECK(pfc.paused_mask(0) == 0x08);
  CHECK(pfc.held(0) == 0);  // stormed: sends anyway
  CHECK(pfc.paused_since_ps(0, 3) == -1);
  pfc.restore(0, 3);
  pfc.recount_pause(0, 3, 2'000);
  CHECK(pfc.held(0) == 0x08);
  CHECK(pfc.settle(0, 3, 2'500) == 500);
}

TEST_CASE("PFC state exchange: a node's export restores it elsewhere") {
  const std::vector<BufferMmu> mmus = buffers();
  PfcFlowControl a, b;
  a.setup(fabric(mmus));
  b.setup(fabric(mmus));
  a.pause(2, 3, 1'000'000, 100);
  int64_t counted = 0;
  a.resume(2, 3, 400'100, counted);
  a.pause(2, 3, 2'000'000, 500'000);
  std::vector<std::byte> blob;
  a.export_node(1, blob);
  b.import_node(1, blob);
  CHECK(b.held(2) == 0x08);
  CHECK(b.paused_until_ps(2, 3) == 2'000'000);
  // 400 000 finished plus 100 000 running at 600 000.
  CHECK(b.host_paused_ps(0, 0, 1'000'000, 600'000) == 500'000);
  blob.pop_back();
  CHECK_THROWS_AS(b.import_node(1, blob), std::runtime_error);
}
