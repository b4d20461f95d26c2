#pragma once
// Every weight format's dot traits and the generic block dot over them (see block_dot.hpp).

#include "eredu/backends/cuda/dot/act_q8_1.hpp"
#include "eredu/backends/cuda/dot/block_dot.hpp"
#include "eredu/backends/cuda/dot/dp4a.hpp"
#include "eredu/backends/cuda/dot/iq4_dot.hpp"
#include "eredu/backends/cuda/dot/k_quant_dot.hpp"
#include "eredu/backends/cuda/dot/legacy_dot.hpp"
