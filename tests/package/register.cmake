# Registers the package tests (label `package`), included from tests/CMakeLists.txt in builds that
# are not sanitized. A ctest fixture installs this build into a temporary prefix; the consumer
# project in this folder is then configured, built and run against that prefix only, and asked for
# a component this build does not have, which must fail with a message naming it.
set(eredu_package_work ${CMAKE_CURRENT_BINARY_DIR}/package)
set(eredu_package_prefix ${eredu_package_work}/prefix)

# Pick a backend this build lacks (or a made-up one when every backend is built).
set(eredu_package_missing "")
foreach(candidate IN ITEMS vulkan cuda)
  if(NOT candidate IN_LIST EREDU_BACKEND_NAMES)
    set(eredu_package_missing ${candidate})
    break()
  endif()
endforeach()
if(NOT eredu_package_missing)
  set(eredu_package_missing metal)
endif()

set(eredu_package_args
  -DEREDU_BUILD_DIR=${PROJECT_BINARY_DIR}
  -DEREDU_PREFIX=${eredu_package_prefix}
  -DEREDU_WORK_DIR=${eredu_package_work}
  -DEREDU_CONSUMER_SOURCE=${CMAKE_CURRENT_SOURCE_DIR}/package
  -DEREDU_GENERATOR=${CMAKE_GENERATOR}
  -DEREDU_CXX_COMPILER=${CMAKE_CXX_COMPILER}
  -DEREDU_MISSING_COMPONENT=${eredu_package_missing})
set(eredu_package_script ${CMAKE_CURRENT_SOURCE_DIR}/package/run_package_test.cmake)

add_test(NAME package.install
  COMMAND ${CMAKE_COMMAND} ${eredu_package_args} -DEREDU_CONFIG=$<CONFIG> -DEREDU_STEP=install
          -P ${eredu_package_script})
add_test(NAME package.consumer_builds_and_runs
  COMMAND ${CMAKE_COMMAND} ${eredu_package_args} -DEREDU_CONFIG=$<CONFIG> -DEREDU_STEP=consumer
          -P ${eredu_package_script})
add_test(NAME package.missing_component_fails_clearly
  COMMAND ${CMAKE_COMMAND} ${eredu_package_args} -DEREDU_CONFIG=$<CONFIG> -DEREDU_STEP=missing
          -P ${eredu_package_script})
set_tests_properties(package.install PROPERTIES
  LABELS package FIXTURES_SETUP eredu_package TIMEOUT 300)
set_tests_properties(package.consumer_builds_and_runs package.missing_component_fails_clearly
  PROPERTIES LABELS package FIXTURES_REQUIRED eredu_package TIMEOUT 600
  # Both configure in their own folder; serial keeps the 2-core CI machine responsive.
  RUN_SERIAL TRUE)
