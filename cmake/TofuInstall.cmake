# The install rules of what a training program outside this tree needs:
# the tools, the runtime library and headers, the operator library, and the
# CMake package (cmake/TofuConfig.cmake.in) with tofu_add_plan
# (cmake/TofuPlan.cmake). docs/Linking.md describes the installed layout.

include(CMakePackageConfigHelpers)

set(TOFU_INSTALL_BINDIR bin)
set(TOFU_INSTALL_SPECSDIR share/tofu/specs)
set(TOFU_INSTALL_CMAKEDIR lib/cmake/Tofu)

install(TARGETS tofu-plan tofu-graph tofu-run tofu-calibrate tdlc tdl-eval
        RUNTIME DESTINATION ${TOFU_INSTALL_BINDIR})
install(TARGETS TofuRuntime EXPORT TofuTargets
        ARCHIVE DESTINATION lib
        INCLUDES DESTINATION include)
install(DIRECTORY runtime/include/tofu/Runtime DESTINATION include/tofu
        FILES_MATCHING PATTERN "*.h")
install(DIRECTORY specs/ DESTINATION ${TOFU_INSTALL_SPECSDIR}
        FILES_MATCHING PATTERN "*.tdl")

install(EXPORT TofuTargets NAMESPACE Tofu::
        DESTINATION ${TOFU_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/TofuConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/TofuConfig.cmake
  INSTALL_DESTINATION ${TOFU_INSTALL_CMAKEDIR}
  PATH_VARS TOFU_INSTALL_BINDIR TOFU_INSTALL_SPECSDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/TofuConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/TofuConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/TofuConfigVersion.cmake
              cmake/TofuPlan.cmake
        DESTINATION ${TOFU_INSTALL_CMAKEDIR})
