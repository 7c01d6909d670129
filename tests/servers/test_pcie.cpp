// The PCIe link model (servers/pcie.hpp) against the numbers its sources give: the spec's
// transfer rates and encodings, and the SIGCOMM'18 pcie-model's ACK/flow-control terms.
#include <catch2/catch.hpp>

#include "servers/pcie.hpp"

using fabricsim::PcieConfig;

TEST_CASE("PCIe raw rate: GT/s x lanes x encoding as the PCIe specs give them") {
  // PCIe 3.0 introduced 128b/130b at 8 GT/s: 7.877 Gb/s a lane (PCI-SIG; Intel AN 708: a Gen3
  // x8 link moves "about 8 GBps"). Gen1/Gen2 lose 20 % to 8b/10b.
  CHECK(fabricsim::pcie_raw_rate_bps({3, 8, 256}) == Approx(8e9 * 8 * 128 / 130));
  CHECK(fabricsim::pcie_raw_rate_bps({3, 8, 256}) / 8e9 == Approx(7.877).epsilon(1e-3));
  CHECK(fabricsim::pcie_raw_rate_bps({1, 1, 128}) == Approx(2e9));
  CHECK(fabricsim::pcie_raw_rate_bps({2, 16, 128}) == Approx(64e9));
  CHECK(fabricsim::pcie_raw_rate_bps({4, 16, 256}) == Approx(252.0615e9).epsilon(1e-6));
  CHECK(fabricsim::pcie_raw_rate_bps({5, 16, 256}) == Approx(504.123e9).epsilon(1e-6));
}

TEST_CASE("PCIe TLP rate: ACK and flow-control DLLPs at the spec's rates and SKP ordered sets") {
  // Neugebauer et al., SIGCOMM'18, model/pcie.py: 8-byte ACK and FC-update DLLPs, one each per
  // "Ack limit" bytes (Base Spec 5.0 Table 3-7..3-9: Gen3 x8 at MPS 256, 203 bytes), and a
  // 4-byte SKP ordered set every 1538 symbols.
  const double raw = 8e9 * 8 * 128 / 130;
  CHECK(fabricsim::pcie_tlp_rate_bps({3, 8, 256}) ==
        Approx(raw * (1 - 16.0 / 203 - 4.0 / 1538)).epsilon(1e-12));
  CHECK(fabricsim::pcie_tlp_rate_bps({3, 8, 256}) / 1e9 == Approx(57.88).epsilon(1e-3));
  // Gen1 x16 at MPS 128 has the table's smallest limit, 48 bytes: a third of the link is DLLPs.
  CHECK(fabricsim::pcie_tlp_rate_bps({1, 16, 128}) ==
        Approx(32e9 * (1 - 16.0 / 48 - 4.0 / 1538)).epsilon(1e-12));
}

TEST_CASE("PCIe write data rate: each MPS-byte write carries 24 bytes of TLP overhead") {
  // A 64-bit memory write: 8 B framing, sequence number and LCRC + 4 B TLP header + 12 B write
  // header (model/pcie.py TLP_MWr_Hdr_Szs[64][0]); Intel AN 708 gives "5-7 dwords" per TLP.
  const PcieConfig gen4{4, 16, 256};
  const double tlp = fabricsim::pcie_tlp_rate_bps(gen4);
  CHECK(fabricsim::pcie_write_data_rate_bps(gen4) == static_cast<int64_t>(tlp * 256 / 280 + 0.5));
  // RTX 4090's PCIe 4.0 x16 at MPS 256: 26.0 GB/s per direction, 82.5 % of the raw rate.
  CHECK(fabricsim::pcie_write_data_rate_bps(gen4) / 8e9 == Approx(25.99).epsilon(1e-3));
  // Larger payloads amortise the header: MPS 512 moves more than 256, 128 less.
  CHECK(fabricsim::pcie_write_data_rate_bps({4, 16, 512}) >
        fabricsim::pcie_write_data_rate_bps(gen4));
  CHECK(fabricsim::pcie_write_data_rate_bps({4, 16, 128}) <
        fabricsim::pcie_write_data_rate_bps(gen4));
}

TEST_CASE("PCIe configurations outside the spec's values are not valid") {
  CHECK(fabricsim::pcie_config_valid({4, 16, 256}));
  CHECK(fabricsim::pcie_config_valid({1, 1, 4096}));
  CHECK_FALSE(fabricsim::pcie_config_valid({6, 16, 256}));  // FLIT mode: not modelled
  CHECK_FALSE(fabricsim::pcie_config_valid({4, 3, 256}));
  CHECK_FALSE(fabricsim::pcie_config_valid({4, 32, 256}));
  CHECK_FALSE(fabricsim::pcie_config_valid({4, 16, 300}));
  CHECK_FALSE(fabricsim::pcie_config_valid({4, 16, 64}));
}
