// ns-3 side of the fabricsim/ns-3 reference comparison (bench/ns3_compare.sh).
//
// The same fabric and traffic as bench/leafspine_permutation.yaml:
//   - spine-leaf, 8 leaves x 8 hosts, 8 spines, every leaf linked to every spine by one link;
//   - every link PointToPoint, 100 Gb/s, 1 us propagation delay;
//   - host j of leaf l sends 1 MB (1,000,000 bytes) to host j of leaf (l+1) mod 8, all 64 flows
//     starting at t = 0 (host index = leaf * 8 + j, as fabricsim numbers them).
//
// Transport: TCP (BulkSendApplication -> PacketSink), ns-3's default TCP (Cubic in 3.37) with SACK,
// 4096-byte segments (the payload per packet equals fabricsim's nic.mtu: 4096B), an ACK for every
// segment (DelAckCount 1, as fabricsim's nic.ack_interval 1), and socket buffers large enough
// (4 MB) never to limit a 1 MB flow. The link MTU is 4096 + 20 (IPv4) + 60 (TCP with the largest
// options), so no segment is fragmented. TCP adds a SYN/SYN-ACK handshake and its ACKs, as
// fabricsim's RoCE adds ACKs; TCP starts in slow start (initial window 10 segments) where RoCE
// starts at line rate.
//
// Routing: IPv4 global routing with Ipv4GlobalRouting::RandomEcmpRouting = true, i.e. PER-PACKET
// random spraying over the 8 equal-cost uplinks. ns-3.37 has no per-flow (hash) ECMP; without
// RandomEcmpRouting every flow of a leaf takes the first route (one spine).
//
// Queues: no traffic-control queue disc (the default FqCoDel is removed); every device has a
// drop-tail queue of --queue-bytes (default 1 MiB, fabricsim's buffer_per_port). ns-3 has no PFC
// or ECN marking here: a full queue drops.
//
// Counted:
//   packet_hops       every frame whose transmission ended on any link (PhyTxEnd of every
//                     PointToPointNetDevice), data, ACKs and handshake alike: fabricsim's
//                     packet_hops;
//   packets_delivered every frame received by a host's device (MacRx on the host side): data at
//                     the receivers, ACKs at the senders: fabricsim's packets_delivered;
//   data_delivered    those of them larger than 1000 bytes (data segments).
// The run stops when every sink has received its 1,000,000 bytes; sim_time_us is that time (the
// last flow's completion), and wall_s times Simulator::Run() only (setup_s the topology, stack,
// addresses and the global-routing computation before it).
//
// Output: one line,
//   ns3 wall_s=... setup_s=... sim_time_us=... packets_delivered=... data_delivered=...
//       packet_hops=... packet_hops_per_s=... events=... events_per_s=... flows_done=...
//       fct_min_us=... fct_median_us=... fct_max_us=... drops=...

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

using namespace ns3;

namespace {

uint64_t g_packet_hops = 0;
uint64_t g_delivered = 0;
uint64_t g_data_delivered = 0;
uint64_t g_drops = 0;
uint32_t g_flows_done = 0;
uint32_t g_flows = 0;
uint64_t g_flow_bytes = 0;
std::vector<uint64_t> g_rx_bytes;
std::vector<double> g_fct_us;

void PhyTxEnd(Ptr<const Packet>) {
  ++g_packet_hops;
}

void HostMacRx(Ptr<const Packet> p) {
  ++g_delivered;
  if (p->GetSize() > 1000) ++g_data_delivered;
}

void Drop(Ptr<const Packet>) {
  ++g_drops;
}

void SinkRx(uint32_t flow, Ptr<const Packet> p, const Address&) {
  uint64_t& got = g_rx_bytes[flow];
  const bool was_done = got >= g_flow_bytes;
  got += p->GetSize();
  if (!was_done && got >= g_flow_bytes) {
    g_fct_us[flow] = Simulator::Now().GetSeconds() * 1e6;
    if (++g_flows_done == g_flows) Simulator::Stop();
  }
}

}  // namespace

int main(int argc, char* argv[]) {
  uint32_t leaves = 8, spines = 8, hosts_per_leaf = 8;
  uint64_t flow_bytes = 1000000;   // 1 MB, the same on the fabricsim side
  uint32_t payload = 4096;         // TCP segment payload = fabricsim nic.mtu
  uint32_t queue_bytes = 1048576;  // per device, = fabricsim switch.buffer_per_port
  uint32_t init_cwnd = 10;         // segments; ns-3's default
  std::string rate = "100Gbps", delay = "1us", tcp = "";
  double stop_s = 10.0;  // safety stop (simulated)

  CommandLine cmd(__FILE__);
  cmd.AddValue("leaves", "leaf switches", leaves);
  cmd.AddValue("spines", "spine switches", spines);
  cmd.AddValue("hostsPerLeaf", "hosts per leaf", hosts_per_leaf);
  cmd.AddValue("flowBytes", "bytes per flow", flow_bytes);
  cmd.AddValue("payload", "TCP segment size (payload bytes per packet)", payload);
  cmd.AddValue("queueBytes", "drop-tail queue per device, bytes", queue_bytes);
  cmd.AddValue("initCwnd", "TCP initial window, segments", init_cwnd);
  cmd.AddValue("rate", "link rate", rate);
  cmd.AddValue("delay", "link propagation delay", delay);
  cmd.AddValue("tcp", "TCP congestion control TypeId (empty: ns-3 default)", tcp);
  cmd.AddValue("stop", "simulated safety stop, seconds", stop_s);
  cmd.Parse(argc, argv);

  const auto setup_start = std::chrono::steady_clock::now();

  Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(true));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(payload));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(init_cwnd));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4u << 20));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4u << 20));
  if (!tcp.empty())
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName(tcp)));

  NodeContainer hosts, leaf_sw, spine_sw;
  hosts.Create(leaves * hosts_per_leaf);
  leaf_sw.Create(leaves);
  spine_sw.Create(spines);

  InternetStackHelper stack;
  stack.Install(hosts);
  stack.Install(leaf_sw);
  stack.Install(spine_sw);

  PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", StringValue(rate));
  p2p.SetDeviceAttribute("Mtu", UintegerValue(payload + 20 + 60));
  p2p.SetChannelAttribute("Delay", StringValue(delay));
  p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
               QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, queue_bytes)));

  Ipv4AddressHelper addr;
  addr.SetBase("10.0.0.0", "255.255.255.252");
  NetDeviceContainer all_devices, host_devices;
  std::vector<Ipv4Address> host_ip(hosts.GetN());

  for (uint32_t l = 0; l < leaves; ++l) {
    for (uint32_t j = 0; j < hosts_per_leaf; ++j) {
      const uint32_t h = l * hosts_per_leaf + j;
      NetDeviceContainer d = p2p.Install(hosts.Get(h), leaf_sw.Get(l));
      Ipv4InterfaceContainer ifc = addr.Assign(d);
      addr.NewNetwork();
      host_ip[h] = ifc.GetAddress(0);
      host_devices.Add(d.Get(0));
      all_devices.Add(d);
    }
    for (uint32_t s = 0; s < spines; ++s) {
      NetDeviceContainer d = p2p.Install(leaf_sw.Get(l), spine_sw.Get(s));
      addr.Assign(d);
      addr.NewNetwork();
      all_devices.Add(d);
    }
  }
  // Plain drop-tail device queues, as a switch port's FIFO: remove the default queue discs.
  TrafficControlHelper().Uninstall(all_devices);

  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  for (uint32_t i = 0; i < all_devices.GetN(); ++i) {
    Ptr<PointToPointNetDevice> dev = DynamicCast<PointToPointNetDevice>(all_devices.Get(i));
    dev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&PhyTxEnd));
    dev->TraceConnectWithoutContext("MacTxDrop", MakeCallback(&Drop));
    dev->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&Drop));
  }
  for (uint32_t i = 0; i < host_devices.GetN(); ++i) {
    host_devices.Get(i)->TraceConnectWithoutContext("MacRx", MakeCallback(&HostMacRx));
  }

  g_flow_bytes = flow_bytes;
  ApplicationContainer sinks, sources;
  for (uint32_t l = 0; l < leaves; ++l) {
    for (uint32_t j = 0; j < hosts_per_leaf; ++j) {
      const uint32_t src = l * hosts_per_leaf + j;
      const uint32_t dst = ((l + 1) % leaves) * hosts_per_leaf + j;
      const uint16_t port = static_cast<uint16_t>(10000 + src);
      const uint32_t flow = g_flows++;
      g_rx_bytes.push_back(0);
      g_fct_us.push_back(-1);

      PacketSinkHelper sink("ns3::TcpSocketFactory",
                            InetSocketAddress(Ipv4Address::GetAny(), port));
      ApplicationContainer sa = sink.Install(hosts.Get(dst));
      sa.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&SinkRx, flow));
      sinks.Add(sa);

      BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(host_ip[dst], port));
      bulk.SetAttribute("MaxBytes", UintegerValue(flow_bytes));
      bulk.SetAttribute("SendSize", UintegerValue(payload));
      sources.Add(bulk.Install(hosts.Get(src)));
    }
  }
  sinks.Start(Seconds(0));
  sources.Start(Seconds(0));
  Simulator::Stop(Seconds(stop_s));

  const auto run_start = std::chrono::steady_clock::now();
  Simulator::Run();
  const auto run_end = std::chrono::steady_clock::now();

  const double sim_us = Simulator::Now().GetSeconds() * 1e6;
  const uint64_t events = Simulator::GetEventCount();
  Simulator::Destroy();

  const double setup_s = std::chrono::duration<double>(run_start - setup_start).count();
  const double wall_s = std::chrono::duration<double>(run_end - run_start).count();
  std::vector<double> fct;
  for (double f : g_fct_us)
    if (f >= 0) fct.push_back(f);
  std::sort(fct.begin(), fct.end());
  const auto at = [&](double q) {
    return fct.empty() ? -1.0 : fct[static_cast<size_t>(q * (fct.size() - 1))];
  };

  std::printf(
      "ns3 wall_s=%.6f setup_s=%.6f sim_time_us=%.3f packets_delivered=%llu "
      "data_delivered=%llu packet_hops=%llu packet_hops_per_s=%.0f events=%llu "
      "events_per_s=%.0f flows_done=%u/%u fct_min_us=%.3f fct_median_us=%.3f "
      "fct_max_us=%.3f drops=%llu\n",
      wall_s, setup_s, sim_us, (unsigned long long)g_delivered,
      (unsigned long long)g_data_delivered, (unsigned long long)g_packet_hops,
      wall_s > 0 ? g_packet_hops / wall_s : 0.0, (unsigned long long)events,
      wall_s > 0 ? events / wall_s : 0.0, g_flows_done, g_flows, at(0.0), at(0.5), at(1.0),
      (unsigned long long)g_drops);
  return g_flows_done == g_flows ? 0 : 1;
}
