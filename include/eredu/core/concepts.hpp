#pragma once
// Every backend contract of eredu as a C++20 concept, each with its diagnoser
// (eredu::diagnose::<name><T>() and <name>_unmet<T>()). See docs in each header.
//
// AutomaticPlanningBackend and ExecutionPlanBackendFactory name plan/runtime types that core only
// forward-declares (core/planning_fwd.hpp). A backend can implement them from these declarations
// (it takes the plan and the runtime by reference); to CHECK a type against them, include the
// definitions too: eredu/plan/realization.hpp and eredu/runtime/model_runtime.hpp.

#include "eredu/core/concepts/automatic_planning_backend.hpp"
#include "eredu/core/concepts/backend_error_type.hpp"
#include "eredu/core/concepts/backend_provider.hpp"
#include "eredu/core/concepts/backend_session.hpp"
#include "eredu/core/concepts/completion.hpp"
#include "eredu/core/concepts/execution_plan_backend_factory.hpp"
#include "eredu/core/concepts/model_loading_backend.hpp"
#include "eredu/core/concepts/neural_backend.hpp"
#include "eredu/core/concepts/parameter_backend.hpp"
#include "eredu/core/concepts/text_generation_backend.hpp"
