#include "topologies/servers.hpp"

#include <string>

#include "servers/pcie.hpp"
#include "sim/config/loader.hpp"

namespace fabricsim {

void add_servers(const Scenario& sc, Fabric& f, int64_t whole_servers_per, const char* unit) {
  const int G = sc.topology.gpus_per_server;
  if (G <= 1) return;
  if (whole_servers_per % G != 0) {
    throw key_error(sc, "topology.gpus_per_server",
                    std::to_string(G) + " GPUs per server do not divide the " +
                        std::to_string(whole_servers_per) + " hosts of a " + unit +
                        ": a server's GPUs must sit under one " + unit);
  }
  const bool pcie = sc.topology.gpu_interconnect == "pcie";
  if (!pcie && sc.link.nvlink_rate_bps <= 0) {
    throw key_error(sc, "link.nvlink_rate",
                    "required with gpus_per_server > 1: the GPU <-> NVSwitch rate per direction, "
                    "e.g. 3600Gbps (H100: 450 GB/s); or topology.gpu_interconnect: pcie for "
                    "GPUs without NVLink");
  }
  FabricGraph& g = f.graph;
  // The intra-server link: an NVLink at NCCL's share of its rate, or a PCIe link at the payload
  // rate of peer-to-peer writes (servers/pcie.hpp).
  EdgeProps nvlink{pcie ? pcie_write_data_rate_bps(sc.pcie) : sc.link.nvlink_data_rate_bps(), 0};
  nvlink.nvlink = true;
  nvlink.pcie = pcie;
  const int servers = static_cast<int>(f.hosts.size()) / G;
  for (int v = 0; v < servers; ++v) {
    NodeProps p;
    p.kind = NodeKind::kSwitch;
    p.role = pcie ? Role::kPcieSwitch : Role::kNvSwitch;
    p.name = (pcie ? "pcie" : "nvswitch") + std::to_string(v);
    p.tier = 1;
    p.server = v;
    const VertexId nvswitch = boost::add_vertex(p, g);
    for (int gpu = 0; gpu < G; ++gpu) {
      const VertexId host = f.hosts[static_cast<size_t>(v) * G + gpu];
      g[host].server = v;
      g[host].rail = gpu;
      boost::add_edge(host, nvswitch, nvlink, g);
    }
  }
  f.gpus_per_server = G;
}

}  // namespace fabricsim
