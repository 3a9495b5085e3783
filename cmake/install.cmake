# Where `cmake --install` puts things (GNUInstallDirs; docs/install.md), and
# two helpers for installed files that name other installed files by paths
# relative to their own place, so that an installed tree can be moved:
# `cmake --install build --prefix DIR`, DESTDIR and a .deb need no
# reconfiguring.
include(GNUInstallDirs)

# The headers go to a folder of their own: <prefix>/include/upvm/pvm3.h does
# not collide with genuine PVM's pvm3.h (Debian's pvm-dev: /usr/include).
set(UPVM_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/upvm)
set(UPVM_INSTALL_PKGCONFIGDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
set(UPVM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/UPVM)
set(UPVM_INSTALL_STARTDIR ${CMAKE_INSTALL_LIBDIR}/upvm) # upvmcc's start-up object

# The C library's start file for position-independent programs, which
# process-mode programs link (docs/process-mode.md): the wrappers ask their
# compiler each time; upvm.pc cannot, so it names this one, and
# UPVMConfig.cmake falls back on it.
execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=Scrt1.o
                OUTPUT_VARIABLE UPVM_SCRT1 OUTPUT_STRIP_TRAILING_WHITESPACE)
get_filename_component(UPVM_SCRT1 "${UPVM_SCRT1}" REALPATH)

# upvm_prefix_from(OUT FROM HERE): an expression for the install prefix in
# a file installed in FROM (a folder relative to the prefix), given the
# expression HERE for that folder: "${HERE}/.." for bin.  A FROM set to an
# absolute path cannot be relocated: then the configured prefix.
function(upvm_prefix_from out from here)
  if(IS_ABSOLUTE "${from}")
    set(${out} "${CMAKE_INSTALL_PREFIX}" PARENT_SCOPE)
    return()
  endif()
  file(RELATIVE_PATH up "/p/${from}" "/p")
  string(REGEX REPLACE "/$" "" up "${up}")
  set(${out} "${here}/${up}" PARENT_SCOPE)
endfunction()

# upvm_under_prefix(OUT DIR PREFIX): the install folder DIR (relative to the
# prefix, or absolute) as an expression under PREFIX.
function(upvm_under_prefix out dir prefix)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
