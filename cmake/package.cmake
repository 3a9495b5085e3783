# The CMake package (find_package(UPVM): UPVMConfig.cmake, its version
# file, UPVMTargets.cmake with UPVM::libupvm) and the .deb (cpack -G DEB).
include(CMakePackageConfigHelpers)

# A sanitizer build of libupvm needs its runtime linked into the program.
set(UPVM_CONFIG_LINK_EXTRA "")
if(UPVM_SANITIZE)
  set(UPVM_CONFIG_LINK_EXTRA ";-fsanitize=address,undefined")
endif()

install(EXPORT UPVMTargets NAMESPACE UPVM:: DESTINATION ${UPVM_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/UPVMConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/UPVMConfig.cmake
  INSTALL_DESTINATION ${UPVM_INSTALL_CMAKEDIR}
  PATH_VARS UPVM_INSTALL_INCLUDEDIR UPVM_INSTALL_STARTDIR)
# 0.x: a newer minor version may change the ABI.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/UPVMConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/UPVMConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/UPVMConfigVersion.cmake
        DESTINATION ${UPVM_INSTALL_CMAKEDIR})

# cpack -G DEB (in the build folder): a Debian package of what
# `cmake --install` installs, under /usr.
set(CPACK_PACKAGE_NAME upvm)
set(CPACK_PACKAGE_VENDOR "the UPVM authors")
set(CPACK_PACKAGE_CONTACT "the UPVM authors")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "PVM 3 programs on user-level processes")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR TGZ)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# the libraries' dependencies (libc, and MPI's for the MPI plugin) from
# dpkg-shlibdeps (dpkg-dev; without it the package names only those below);
# the wrappers need a C compiler and the C library's files
find_program(UPVM_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(UPVM_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "gcc | c-compiler, libc6-dev")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "g++, gfortran, pkgconf")
include(CPack)
