# One step of the package test, run by ctest as `cmake -D... -DEREDU_STEP=<step> -P <this file>`:
#   install   fresh `cmake --install` of the build into EREDU_PREFIX
#   consumer  configure, build and run the consumer against EREDU_PREFIX alone
#   missing   configure the consumer asking for EREDU_MISSING_COMPONENT: must fail, naming it
cmake_minimum_required(VERSION 3.25)

function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(step_rc "${rc}" PARENT_SCOPE)
  set(step_output "${out}${err}" PARENT_SCOPE)
endfunction()

# The consumer must find eredu in the prefix and its dependencies in the system, nothing else:
# no package registry, no build tree.
set(consumer_args -G ${EREDU_GENERATOR} -DCMAKE_CXX_COMPILER=${EREDU_CXX_COMPILER}
  -DCMAKE_PREFIX_PATH=${EREDU_PREFIX} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -DCMAKE_BUILD_TYPE=${EREDU_CONFIG})

if(EREDU_STEP STREQUAL "install")
  file(REMOVE_RECURSE ${EREDU_PREFIX})
  set(config_args "")
  if(EREDU_CONFIG)
    set(config_args --config ${EREDU_CONFIG})
  endif()
  run_step(${CMAKE_COMMAND} --install ${EREDU_BUILD_DIR} --prefix ${EREDU_PREFIX} ${config_args})
  if(NOT step_rc EQUAL 0)
    message(FATAL_ERROR "cmake --install into ${EREDU_PREFIX} failed:\n${step_output}")
  endif()
  file(GLOB_RECURSE config_file ${EREDU_PREFIX}/*/eredu-config.cmake)
  if(NOT config_file)
    message(FATAL_ERROR "the install has no eredu-config.cmake:\n${step_output}")
  endif()
  # The main job is installed with the package when the build has the examples.
  if(EXISTS ${EREDU_BUILD_DIR}/bin/eredu-run AND NOT EXISTS ${EREDU_PREFIX}/bin/eredu-run)
    message(FATAL_ERROR "the install has no bin/eredu-run:\n${step_output}")
  endif()
  message(STATUS "installed eredu into ${EREDU_PREFIX} (${config_file})")

elseif(EREDU_STEP STREQUAL "consumer")
  set(build ${EREDU_WORK_DIR}/consumer-build)
  file(REMOVE_RECURSE ${build})
  run_step(${CMAKE_COMMAND} -S ${EREDU_CONSUMER_SOURCE} -B ${build} ${consumer_args}
           -DEREDU_CONSUMER_COMPONENTS=cpu)
  if(NOT step_rc EQUAL 0)
    message(FATAL_ERROR "configuring the consumer against ${EREDU_PREFIX} failed:\n${step_output}")
  endif()
  if(NOT step_output MATCHES "found eredu [0-9.]+ in ${EREDU_PREFIX}")
    message(FATAL_ERROR "the consumer did not find eredu in ${EREDU_PREFIX}:\n${step_output}")
  endif()
  run_step(${CMAKE_COMMAND} --build ${build})
  if(NOT step_rc EQUAL 0)
    message(FATAL_ERROR "building the consumer failed:\n${step_output}")
  endif()
  run_step(${build}/consumer)
  if(NOT step_rc EQUAL 0 OR NOT step_output MATCHES "eredu package works")
    message(FATAL_ERROR "the consumer failed (exit ${step_rc}):\n${step_output}")
  endif()
  message(STATUS "${step_output}")

elseif(EREDU_STEP STREQUAL "missing")
  set(build ${EREDU_WORK_DIR}/missing-build)
  file(REMOVE_RECURSE ${build})
  run_step(${CMAKE_COMMAND} -S ${EREDU_CONSUMER_SOURCE} -B ${build} ${consumer_args}
           -DEREDU_CONSUMER_COMPONENTS=cpu,${EREDU_MISSING_COMPONENT})
  if(step_rc EQUAL 0)
    message(FATAL_ERROR "asking for the component '${EREDU_MISSING_COMPONENT}', which this build "
                        "lacks, configured without an error:\n${step_output}")
  endif()
  string(REPLACE "\n" " " flat "${step_output}")
  string(REGEX REPLACE " +" " " flat "${flat}")
  if(NOT flat MATCHES "without the '${EREDU_MISSING_COMPONENT}' backend")
    message(FATAL_ERROR "configuring with the missing component '${EREDU_MISSING_COMPONENT}' failed "
                        "without a message naming it:\n${step_output}")
  endif()
  message(STATUS "asking for '${EREDU_MISSING_COMPONENT}' fails clearly")

else()
  message(FATAL_ERROR "unknown EREDU_STEP '${EREDU_STEP}'")
endif()
