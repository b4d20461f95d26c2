# install(EXPORT) with a relocatable package config, a version file and components per backend.
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(backend IN LISTS EREDU_BACKEND_NAMES)
  # A backend may have no public headers yet; installing a missing folder fails at install time.
  if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/backends/${backend}/include)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/backends/${backend}/include/
            DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endforeach()

install(TARGETS eredu_core eredu_eredu ${EREDU_BACKEND_TARGETS}
  EXPORT eredu-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set(EREDU_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/eredu)
install(EXPORT eredu-targets NAMESPACE eredu:: DESTINATION ${EREDU_CMAKE_DIR})

set(EREDU_INSTALLED_COMPONENTS ${EREDU_BACKEND_NAMES})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/eredu-config.cmake.in
  ${PROJECT_BINARY_DIR}/eredu-config.cmake INSTALL_DESTINATION ${EREDU_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/eredu-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/eredu-config.cmake ${PROJECT_BINARY_DIR}/eredu-config-version.cmake
  DESTINATION ${EREDU_CMAKE_DIR})
