#pragma once
// Umbrella header for the backend-neutral generation layer.

#include "eredu/generation/cancellation.hpp"
#include "eredu/generation/generation_loop.hpp"
#include "eredu/generation/generation_sequence.hpp"
#include "eredu/generation/prompt_checks.hpp"
#include "eredu/generation/rng.hpp"
#include "eredu/generation/sampler.hpp"
#include "eredu/generation/sampling_config.hpp"
#include "eredu/generation/stop_strings.hpp"
#include "eredu/generation/token.hpp"
#include "eredu/generation/utf8_stream.hpp"
