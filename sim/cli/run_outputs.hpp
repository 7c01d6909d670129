// Moved to the run library: sim/run/run_outputs.hpp.
#pragma once

#include "sim/run/run_outputs.hpp"
