# Every build option of eredu, in one place.
#
# EREDU_WITH_VULKAN and EREDU_WITH_CUDA take ON, OFF or AUTO. AUTO turns the backend on when its
# toolchain is found and off (with a status line saying why) when it is not; ON makes a missing
# toolchain a configure error.
include_guard(GLOBAL)

option(EREDU_WITH_CPU "Build the CPU backend (eredu::cpu)" ON)
set(EREDU_WITH_VULKAN "AUTO" CACHE STRING "Build the Vulkan backend: ON, OFF or AUTO")
set_property(CACHE EREDU_WITH_VULKAN PROPERTY STRINGS ON OFF AUTO)
set(EREDU_WITH_CUDA "AUTO" CACHE STRING "Build the CUDA backend: ON, OFF or AUTO")
set_property(CACHE EREDU_WITH_CUDA PROPERTY STRINGS ON OFF AUTO)

option(EREDU_BUILD_TESTS "Build the GoogleTest suites and register them with ctest" ${PROJECT_IS_TOP_LEVEL})
option(EREDU_BUILD_BENCH "Build the benchmarks under bench/" OFF)
option(EREDU_BUILD_EXAMPLES "Build the example programs (eredu-inspect, ...)" ${PROJECT_IS_TOP_LEVEL})
option(EREDU_FUZZ "Build the libFuzzer targets (needs clang)" OFF)
option(EREDU_WARNINGS_AS_ERRORS "Treat compiler warnings as errors (CI sets this)" OFF)
set(EREDU_SANITIZE "" CACHE STRING "Sanitizers for every target, e.g. 'address,undefined'")
