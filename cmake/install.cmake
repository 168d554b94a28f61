# Install rules: headers, the library, a CMake package (find_package(greenctx)) and a pkg-config
# file. Consumers need the CUDA toolkit's headers (found again through CUDAToolkit).
include(CMakePackageConfigHelpers)

install(TARGETS greenctx EXPORT greenctxTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/greenctx DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
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

set(GREENCTX_PC_CUDA_INCLUDE "${CUDAToolkit_INCLUDE_DIRS}")
configure_file(cmake/greenctx.pc.in ${CMAKE_CURRENT_BINARY_DIR}/greenctx.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/greenctx.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
