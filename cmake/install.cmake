# Install rules: `cmake --install build --prefix P`.
#
#   P/bin/                          tinyrt-compile, tinyrt-onnx-test, tinyrt-perf, tinyrt-tune, tinyrt-runner (host)
#   P/include/tinyrt/               the public headers (abi/*.h)
#   P/lib/tinyrt/<target>/          libtinyrt.a (Linux port), libtinyrt_baremetal.a and
#                                   libtinyrt_baremetal_fixed.a (-Os; fixed shapes only), tinyrt-runner;
#                                   <target> is host, armv7-neon or aarch64-neon
#   P/lib/tinyrt/libtinyrt_icount.so  the QEMU instruction-counting plugin
#   P/lib/cmake/tinyrt/             the CMake package (tinyrt::tinyrt, tinyrt_add_model)
#   P/lib/pkgconfig/                tinyrt.pc (host), tinyrt-baremetal.pc, tinyrt-<target>[-baremetal].pc
#   P/share/tinyrt/toolchains/      the cross toolchain files
#
# A cross build (TINYRT_BUILD_COMPILER=OFF) installs only its runtimes,
# runner and .pc files; the host build's install runs the cross builds'
# installs into the same prefix.
include(GNUInstallDirs)

set(TINYRT_INSTALL_RUNTIME_DIR ${CMAKE_INSTALL_LIBDIR}/tinyrt/${TINYRT_TARGET})

# --- every build: the runtimes for its target
install(FILES $<TARGET_FILE:tinyrt> DESTINATION ${TINYRT_INSTALL_RUNTIME_DIR})
install(FILES $<TARGET_FILE:tinyrt_baremetal> DESTINATION ${TINYRT_INSTALL_RUNTIME_DIR}
        RENAME libtinyrt_baremetal.a)
install(FILES $<TARGET_FILE:tinyrt_baremetal_fixed> DESTINATION ${TINYRT_INSTALL_RUNTIME_DIR}
        RENAME libtinyrt_baremetal_fixed.a)
if(TINYRT_TARGET STREQUAL "host")
  install(TARGETS tinyrt-runner RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  set(pc_suffix "")
else()
  install(TARGETS tinyrt-runner RUNTIME DESTINATION ${TINYRT_INSTALL_RUNTIME_DIR})
  set(pc_suffix "-${TINYRT_TARGET}")
endif()

# pkg-config: the prefix is filled in at install time (--prefix).
set(TINYRT_PC_PREFIX "@CMAKE_INSTALL_PREFIX@")
foreach(port linux baremetal)
  if(port STREQUAL "linux")
    set(TINYRT_PC_LIB tinyrt)
    set(TINYRT_PC_EXTRA_LIBS " -lpthread")
    set(TINYRT_PC_PORT "Linux port")
    set(pc ${PROJECT_BINARY_DIR}/pkgconfig/tinyrt${pc_suffix}.pc)
  else()
    set(TINYRT_PC_LIB tinyrt_baremetal)
    set(TINYRT_PC_EXTRA_LIBS " -no-pie")  # built without position-independent code
    set(TINYRT_PC_PORT "bare-metal port, no threads")
    set(pc ${PROJECT_BINARY_DIR}/pkgconfig/tinyrt${pc_suffix}-baremetal.pc)
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/tinyrt.pc.in ${pc}.in @ONLY)
  install(CODE "configure_file(\"${pc}.in\" \"${pc}\" @ONLY)")
  install(FILES ${pc} DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

if(NOT TINYRT_BUILD_COMPILER)
  return()
endif()

# --- the host build: tools, headers, toolchain files, the CMake package
# Keep the RUNPATH to LLVM's libraries (/usr/lib/llvm-14/lib) in the installed tools.
set_target_properties(tinyrt-compile tinyrt-onnx-test tinyrt-perf tinyrt-tune PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS tinyrt-compile tinyrt-onnx-test tinyrt-perf tinyrt-tune RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS tinyrt_icount LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/tinyrt)
# The public headers: tinyrt.h and the two it includes. A generated model
# header says #include "tinyrt.h", so consumers put both P/include and
# P/include/tinyrt on the include path (the CMake target and tinyrt.pc do).
install(FILES ${PROJECT_SOURCE_DIR}/abi/tinyrt.h ${PROJECT_SOURCE_DIR}/abi/tinyrt_artifact.h
              ${PROJECT_SOURCE_DIR}/abi/tinyrt_config.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tinyrt)
set(TINYRT_TOOLCHAIN_DIR ${CMAKE_INSTALL_DATADIR}/tinyrt/toolchains)
install(FILES ${PROJECT_SOURCE_DIR}/toolchains/arm-linux-gnueabihf.cmake
              ${PROJECT_SOURCE_DIR}/toolchains/aarch64-linux-gnu.cmake
        DESTINATION ${TINYRT_TOOLCHAIN_DIR})

include(CMakePackageConfigHelpers)
set(TINYRT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tinyrt)
set(TINYRT_LIB_DIR ${CMAKE_INSTALL_LIBDIR}/tinyrt)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tinyrtConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/tinyrtConfig.cmake
  INSTALL_DESTINATION ${TINYRT_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_INCLUDEDIR TINYRT_LIB_DIR TINYRT_TOOLCHAIN_DIR)
# ARCH_INDEPENDENT: a 32-bit armv7 consumer uses this 64-bit host's package.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/tinyrtConfigVersion.cmake
  COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/cmake/tinyrtConfig.cmake ${PROJECT_BINARY_DIR}/cmake/tinyrtConfigVersion.cmake
        DESTINATION ${TINYRT_CMAKE_DIR})

# --- the cross builds (ExternalProjects): run their installs into the same prefix
if(TINYRT_CROSS)
  foreach(cross armv7 aarch64)
    set(dir ${CMAKE_BINARY_DIR}/cross/${cross})
    install(CODE "
      if(NOT EXISTS \"${dir}/cmake_install.cmake\")
        message(FATAL_ERROR \"the ${cross} cross build in ${dir} is not configured: build first\")
      endif()
      set(args --install \"${dir}\" --prefix \"\${CMAKE_INSTALL_PREFIX}\")
      if(CMAKE_INSTALL_DO_STRIP)
        list(APPEND args --strip)
      endif()
      execute_process(COMMAND \"${CMAKE_COMMAND}\" \${args} RESULT_VARIABLE rc)
      if(rc)
        message(FATAL_ERROR \"installing the ${cross} cross build failed\")
      endif()")
  endforeach()
endif()
