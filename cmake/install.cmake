# Installation: the libraries, the header, the CLI, a CMake package
# (find_package(tilefmm)) and a pkg-config file.
include(CMakePackageConfigHelpers)

install(TARGETS tilefmm tilefmm_static
  EXPORT tilefmmTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/tilefmm.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TILEFMM_CLI)
  install(TARGETS tilefmm_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# The static CUDA runtime the static library needs, shipped beside it
# (NVIDIA's EULA lists libcudart_static.a as redistributable): linking
# either library then needs no CUDA toolkit, only the driver at run time.
if(TILEFMM_HAVE_CUDA)
  install(FILES ${TFMM_CUDART_STATIC}
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/tilefmm)
endif()

set(TFMM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tilefmm)
install(EXPORT tilefmmTargets
  NAMESPACE tilefmm::
  DESTINATION ${TFMM_CMAKE_DIR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/tilefmmConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tilefmmConfig.cmake
  INSTALL_DESTINATION ${TFMM_CMAKE_DIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/tilefmmConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/tilefmmConfig.cmake
  ${PROJECT_BINARY_DIR}/tilefmmConfigVersion.cmake
  DESTINATION ${TFMM_CMAKE_DIR})

# pkg-config: the shared library by default; --static adds what the static
# archive needs, the CUDA runtime from the copy installed above. Every path
# is relative to the .pc file (${pcfiledir}): the prefix can move.
if(TILEFMM_HAVE_CUDA)
  set(TFMM_PC_PRIVATE_LIBS
    "\${libdir}/tilefmm/${TFMM_CUDART_NAME} -ldl -lrt -lpthread -lstdc++ -lgomp -lm")
else()
  set(TFMM_PC_PRIVATE_LIBS "-lgomp -lm")
endif()
if(TILEFMM_HAVE_HDF5)
  # The static archive's HDF5, as its own pkg-config file (hdf5.pc) or
  # CMake found it.
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(TFMM_PC_HDF5 QUIET hdf5)
  endif()
  if(TFMM_PC_HDF5_FOUND)
    string(REPLACE ";" " " hdf5_libs "${TFMM_PC_HDF5_LDFLAGS}")
  else()
    string(REPLACE ";" " " hdf5_libs "${HDF5_C_LIBRARIES}")
  endif()
  string(APPEND TFMM_PC_PRIVATE_LIBS " ${hdf5_libs}")
endif()
if(TILEFMM_HAVE_MPI)
  # The static archive's MPI (Open MPI and MPICH both name it libmpi).
  string(APPEND TFMM_PC_PRIVATE_LIBS " -lmpi")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/tilefmm.pc.in
  ${PROJECT_BINARY_DIR}/tilefmm.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tilefmm.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
