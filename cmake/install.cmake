# SPDX-License-Identifier: Apache-2.0
# Install rules: headers, the library, a CMake package (find_package(greenctx)) and a pkg-config
# file. Consumers need the CUDA toolkit's headers (found again through CUDAToolkit).
include(CMakePackageConfigHelpers)

install(TARGETS greenctx EXPORT greenctxTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/greenctx DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/greenctx/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/greenctx)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/NOTICE DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(EXPORT greenctxTargets NAMESPACE greenctx::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/greenctx)
configure_package_config_file(cmake/greenctxConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/greenctxConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/greenctx)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/greenctxConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/greenctxConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/greenctxConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/greenctx)

# greenctx.pc finds its prefix from its own location (${pcfiledir}), so an install with
# `cmake --install build --prefix DIR` (or a moved prefix) points at DIR, not at
# CMAKE_INSTALL_PREFIX as it was at configure time.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(GREENCTX_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(GREENCTX_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH pc_to_prefix "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
  string(REGEX REPLACE "/$" "" pc_to_prefix "${pc_to_prefix}")
  set(GREENCTX_PC_PREFIX "\${pcfiledir}/${pc_to_prefix}")
  set(GREENCTX_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(GREENCTX_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(GREENCTX_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# A static libgreenctx needs its own dependencies (libdl) on the consumer's link line; pkg-config
# adds Libs.private only with --static, so they go to Libs then.
list(TRANSFORM CMAKE_DL_LIBS PREPEND "-l" OUTPUT_VARIABLE pc_deps)
list(JOIN pc_deps " " pc_deps)
get_target_property(greenctx_type greenctx TYPE)
if(greenctx_type STREQUAL "STATIC_LIBRARY")
  set(GREENCTX_PC_LIBS "${pc_deps}")
  set(GREENCTX_PC_LIBS_PRIVATE "")
else()
  set(GREENCTX_PC_LIBS "")
  set(GREENCTX_PC_LIBS_PRIVATE "${pc_deps}")
endif()
configure_file(cmake/greenctx.pc.in ${CMAKE_CURRENT_BINARY_DIR}/greenctx.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/greenctx.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
