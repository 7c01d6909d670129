// InfiniBand credit flow control on its own (IBTA vol. 1 §7.9): credits are 64-byte blocks,
// a frame needs ceil(wire bytes / 64) of them, and a sender may start a frame only while it
// holds them all.
#include <catch2/catch.hpp>

#include <cstdint>

#include "congestion/credits.hpp"

using namespace fabricsim;

TEST_CASE(
    "Credits: a frame takes ceil(bytes / 64) blocks, sends only with all of them, and "
    "gets them back when restored") {
  CreditFlowControl fc;
  CHECK(!fc.on());
  CHECK(fc.credits(0, 3) == 0);  // off: no credits to report
  fc.init(2);
  CHECK(fc.on());
  // 4178 wire bytes (4096 payload + 82 of RoCE-like overhead) = 65.28 blocks -> 66.
  fc.grant(1, 3, 66);
  CHECK(fc.may_send(1, 3, 4178));
  CHECK(!fc.may_send(1, 3, 4225));  // 66.02 blocks -> 67
  CHECK(fc.consume(1, 3, 4178));
  CHECK(fc.credits(1, 3) == 0);
  CHECK(!fc.may_send(1, 3, 1));  // one byte still needs one block
  CHECK(fc.credits(0, 3) == 0);  // other ports and VLs untouched
  CHECK(fc.credits(1, 2) == 0);
  fc.restore(1, 3, 66);
  CHECK(fc.credits(1, 3) == 66);
  // Sending without enough credits is reported.
  CHECK(!fc.consume(1, 3, 64 * 67));
  CHECK(fc.credits(1, 3) == -1);
}
