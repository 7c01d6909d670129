// Rail-optimized fabric (NVIDIA DGX SuperPOD reference architecture): multi-GPU servers whose
// NIC r goes to the rail-r leaf of the server's scalable unit (SU), spines joining the rail
// leaves of every SU, and an NVSwitch per server joining its GPUs over NVLink.
#pragma once

#include "sim/config/scenario.hpp"
#include "topologies/fabric_graph.hpp"
#include "topologies/family.hpp"

namespace fabricsim {

/// Builds a rail-optimized fabric from `topology.{gpus_per_server, nics_per_server, rails,
/// servers_per_su, scalable_units, planes, rail_only, spines, oversubscription}` and
/// `link.{host_rate, fabric_rate, propagation_delay, nvlink_rate}`.
///
/// Symbols: G GPUs per server, N NICs per server (nics_per_server, 0 = G), P planes, R rails
/// per plane, S servers per SU, SU scalable units, K spines per plane (`topology.spines`),
/// h = host_rate (NIC port), f = fabric_rate (0 = h), nv = nvlink_rate, o = oversubscription.
///
/// Model
/// - A host is one GPU with its NIC(s): hosts are the GPUs, H = SU × S × G, host i is GPU
///   i mod G of server i / G (hosts numbered server by server, servers SU by SU). Each server
///   has one NVSwitch (tier 1) and one NVLink edge (nvlink = true, rate nv, delay 0) to each of
///   its GPUs: the whole server's NVLink domain collapsed into one switch.
/// - NICs: N must be a multiple of G (m = N / G NICs per GPU; N < G, GPUs sharing a NIC, is not
///   modelled) and of P. NIC n of a server belongs to GPU n mod G and sits on plane n / R,
///   rail n mod R, with R = N / P. So N = G gives one NIC per GPU, GPU g on plane g / R, rail
///   g mod R (P = 8 with R = 1 is DeepSeek's multi-plane fat tree); N = 2G with P = 2 gives
///   each GPU one NIC on each of two planes (DGX B300 twin-plane). `topology.rails`, when
///   given, must equal N / P.
/// - Leaves: one per (SU, plane, rail), SU × N in all, each with S host links (one NIC of every
///   server in its SU) at h.
/// - Spines (rail_only = false): K per plane, tier 2. Each leaf has
///       U = S × h / (o × f)
///   uplinks at f, which must be a whole number and a multiple of K; the leaf gets U / K
///   parallel links to every spine of its plane. SuperPOD H100, 1 SU: S = 32, o = 1 gives
///   U = 32, 8 links to each of K = 4 spines.
/// - rail_only = true (Wang et al., "Rail-only", 2023): no spines. Two GPUs on different rails
///   meet only through an NVSwitch, so routes may transit a GPU (Fabric::hosts_forward, NCCL's
///   PXN) and the default routing is ECMP (such routes are valleys to up-down). With SU > 1 the
///   scalable units are not connected to each other at all (build_routes rejects such a
///   fabric; `fabricsim topo` can still draw and cost it).
///
/// Vertex order: hosts 0…H-1, NVSwitches (server order), leaves (index
/// (su × P + plane) × R + rail), spines (index plane × K + k). Ports of a GPU: its NIC links
/// first (NIC order), then its NVLink. Ports of a leaf: host links (server order), then
/// uplinks (spine order).
///
/// Figures: switches = SU × N + P × K (NVSwitches not counted); links = SU × S × N host links
/// + SU × N × U uplinks (NVLinks not counted); oversubscription = S × h / (U × f) as built
/// (rail_only: 1, a rail leaf is the top of its rail).
///
/// Bisection bandwidth, one direction: the minimum cut between hosts [0, ⌊H/2⌋) and the rest,
/// in the flow network of metrics.hpp's host_halves_max_flow_bps (every host's arc to the
/// super-source or -sink capped at its NIC capacity m × h; NVLinks are links like any other).
/// With the numbering above the halves are the first SU/2 scalable units against the others
/// when SU is even; when SU is odd, ⌊SU/2⌋ SUs plus the first half of the middle SU: whole
/// servers when S is even, with S odd the middle server's GPUs 0…g_A-1 on side A. Writing
/// ⌊H/2⌋ = k × S × G + s_A × G + g_A, a leaf has a_ℓ side-A hosts: S in an SU wholly on A, 0
/// in one wholly on B, s_A or s_A + 1 in the middle SU (by whether its GPU is one of the g_A).
/// The cut places every switch on its cheaper side:
///   - a leaf on the spines' side cuts its a_ℓ A-side host links, one on the other side its
///     S - a_ℓ host links plus its U uplinks. With its plane's spines on side B a leaf costs
///     c_B(a) = min(a × h, (S - a) × h + U × f), with them on side A c_A(a) = min(a × h +
///     U × f, (S - a) × h). A leaf's cost is concave in the share of its plane's spines on side
///     A, so the minimum puts each plane's spines all on one side;
///   - whole servers stay whole (moving a GPU across costs its host arc and its NVLink, and
///     saves at most its host arc);
///   - the split server's NVSwitch sits on one side; each of its GPUs on the other side either
///     keeps its side (its NVLink crosses: nv) or gives up its host arc (m × h) and counts on
///     the NVSwitch's side (the cheaper when nv ≥ 2 × m × h, as in every DGX).
///   bisection = min over the NVSwitch's side of
///     Σ_planes min(Σ_{ℓ in plane} c_B(a_ℓ), Σ_{ℓ in plane} c_A(a_ℓ)) + the split GPUs' costs,
///   each split GPU choosing the cheaper of its two options inside its plane's sum. With m > 1
///   a GPU's choice spans several planes: only "all keep" and "all give up" are evaluated,
///   exact when nv ≥ 2 × m × h and an upper bound on the cut otherwise (only then, and only
///   when a server is split: SU, S odd).
/// Closed forms of the usual cases (U × f = S × h / o ≤ S × h):
///   - SU even: bisection = SU/2 × N × U × f = H/2 × m × h / o (the SUs' uplinks);
///     rail_only (U = 0): 0, the scalable units are not connected.
///   - SU odd, S even: bisection = ⌊SU/2⌋ × N × U × f + N × S/2 × h (the middle SU is cut
///     through its host links); SU = 1: N × S/2 × h = H/2 × m × h (SuperPOD H100, 1 SU:
///     8 × 16 × 400 Gb/s = 51.2 Tb/s), rail_only as well.
/// Why this cut: when it keeps servers whole (SU × S even) it never exceeds H/2 × m × h (half
/// the hosts' NIC capacity), while a balanced cut that splits servers pays for every split GPU
/// its NVLink or its host arc: the rail-halves cut (GPUs 0…G/2-1 of every server against the
/// rest) costs at least H/2 × min(nv, m × h), so it is never the smaller one when nv ≥ m × h,
/// as in every DGX (H100: 3600 Gb/s NVLink per direction against one 400 Gb/s NIC). With
/// slower NVLink a rail cut can be smaller; it is not what is reported.
/// tests/topologies/test_rail_optimized.cpp checks all of this against a max-flow.
///
/// Throws ConfigError (file sc.path, no position) naming the key:
///   link.nvlink_rate (0), link.host_rate (0), topology.gpus_per_server / servers_per_su /
///   scalable_units (< 1), topology.planes (< 1, or not dividing N),
///   topology.nics_per_server (N not a multiple of G; more NICs per plane than rails, or fewer),
///   topology.spines (< 1 without rail_only; > 0 with rail_only),
///   topology.oversubscription (U not whole or not a multiple of K, naming the ratios that can
///   be built; != 1 with rail_only).
Fabric build_rail_optimized(const Scenario& scenario);

/// The topology-aware split over MPI ranks (FabricSplit), by server: a server's GPUs and NVSwitch
/// are a unit, rail leaves go with their scalable unit; spines are spread.
FabricSplit split_rail_optimized(const Fabric& fabric);

}  // namespace fabricsim
