// The lossless snapshot moved to congestion/ with the monitor that reads it; this header keeps
// the old include path working.
#pragma once

#include "congestion/lossless_snapshot.hpp"
