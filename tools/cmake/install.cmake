# Installing pjemu (`cmake --install build --prefix P`):
#   P/bin/pjemu, P/bin/pjemu-trainer (when built; component trainer)
#   P/share/pjemu/images.yaml (the default image map, with host-python/ beside it) and
#   image-maps/, seeds/, seed-python/
#   P/lib/cmake/pjemu/pjemuConfig.cmake (+ version file, pjemuScenarios.cmake)
# Component `pjemu` holds everything but the trainer, so that `cmake --install build
# --component pjemu` works in a build without LibTorch.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(PJEMU_INSTALL_DATADIR "${CMAKE_INSTALL_DATADIR}/pjemu")
set(PJEMU_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/pjemu")

install(TARGETS pjemu RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT pjemu)
if(TARGET pjemu-trainer)
  install(TARGETS pjemu-trainer RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT trainer)
endif()
install(FILES "${PROJECT_SOURCE_DIR}/fixtures/images.yaml" DESTINATION "${PJEMU_INSTALL_DATADIR}"
        COMPONENT pjemu)
# What images.yaml's host Python entries mount (`python -> /usr/bin/python3`, a symlink).
install(DIRECTORY "${PROJECT_SOURCE_DIR}/fixtures/host-python" DESTINATION "${PJEMU_INSTALL_DATADIR}"
        USE_SOURCE_PERMISSIONS COMPONENT pjemu)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/fixtures/image-maps" "${PROJECT_SOURCE_DIR}/fixtures/seeds"
        DESTINATION "${PJEMU_INSTALL_DATADIR}" COMPONENT pjemu)
# What image-maps/seed-python.yaml maps into the seed image (its own paths are relative).
install(DIRECTORY "${PROJECT_SOURCE_DIR}/fixtures/seed-python" DESTINATION "${PJEMU_INSTALL_DATADIR}"
        USE_SOURCE_PERMISSIONS COMPONENT pjemu)

configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/tools/cmake/pjemuConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/cmake/pjemuConfig.cmake"
  INSTALL_DESTINATION "${PJEMU_INSTALL_CMAKEDIR}"
  PATH_VARS CMAKE_INSTALL_BINDIR PJEMU_INSTALL_DATADIR)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/cmake/pjemuConfigVersion.cmake"
                                 VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/cmake/pjemuConfig.cmake"
              "${PROJECT_BINARY_DIR}/cmake/pjemuConfigVersion.cmake"
              "${PROJECT_SOURCE_DIR}/tools/cmake/pjemuScenarios.cmake"
        DESTINATION "${PJEMU_INSTALL_CMAKEDIR}" COMPONENT pjemu)
