# `cmake --install` and the Debian package (CPack). The installed tree is relocatable:
#   bin/kerncast, bin/kerncast-cli, bin/kerncast-worker
#   share/kerncast/{problems,recordings,prompts,translations}   (found relative to the executable)
#   share/applications/kerncast.desktop, share/mime/packages/kerncast.xml, share/icons/hicolor/*/apps/kerncast.*
#   lib/kerncast/cuda/{lib64,include}   (only in the package: the CUDA libraries the programs link, and the headers
#                                        NVRTC compiles against, so that a machine without the CUDA toolkit runs it)
include(GNUInstallDirs)

set(KERNCAST_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/kerncast)

install(TARGETS kerncast-cli kerncast-worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(KERNCAST_GUI)
  install(TARGETS kerncast RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # The GUI embeds its translations; the .qm files are installed too, for other Qt programs and for translators.
  install(FILES ${CMAKE_BINARY_DIR}/app/kerncast_de.qm DESTINATION ${KERNCAST_INSTALL_DATADIR}/translations)
endif()

install(DIRECTORY ${CMAKE_SOURCE_DIR}/resources/problems ${CMAKE_SOURCE_DIR}/resources/recordings
                  ${CMAKE_SOURCE_DIR}/resources/prompts
        DESTINATION ${KERNCAST_INSTALL_DATADIR})
install(FILES ${CMAKE_SOURCE_DIR}/resources/kerncast.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${CMAKE_SOURCE_DIR}/resources/kerncast-mime.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages
        RENAME kerncast.xml)
install(FILES ${CMAKE_SOURCE_DIR}/resources/icons/kerncast.svg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
foreach(size 32 64 256)
  install(FILES ${CMAKE_SOURCE_DIR}/resources/icons/kerncast-${size}.png
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps RENAME kerncast.png)
endforeach()

# The CUDA toolkit's redistributable libraries and headers, for the package only (EXCLUDE_FROM_ALL keeps them out
# of a plain `cmake --install`, which uses the build machine's toolkit through the RPATH).
set(KERNCAST_CUDA_BUNDLE lib/kerncast/cuda)
file(GLOB KERNCAST_CUDA_LIBS ${CUDAToolkit_LIBRARY_DIR}/libnvrtc.so* ${CUDAToolkit_LIBRARY_DIR}/libnvrtc-builtins.so*
     ${CUDAToolkit_LIBRARY_DIR}/libnvJitLink.so*)
get_filename_component(KERNCAST_CUPTI_DIR ${KERNCAST_CUPTI} DIRECTORY)
file(GLOB KERNCAST_CUPTI_LIBS ${KERNCAST_CUPTI_DIR}/libcupti.so*)
install(FILES ${KERNCAST_CUDA_LIBS} ${KERNCAST_CUPTI_LIBS} DESTINATION ${KERNCAST_CUDA_BUNDLE}/lib64
        COMPONENT cuda_runtime EXCLUDE_FROM_ALL)
install(DIRECTORY ${CUDAToolkit_INCLUDE_DIRS}/ DESTINATION ${KERNCAST_CUDA_BUNDLE}/include
        COMPONENT cuda_runtime EXCLUDE_FROM_ALL PATTERN "cudnn*" EXCLUDE)

set(CPACK_PACKAGE_NAME kerncast)
set(CPACK_PACKAGE_VENDOR "Kerncast")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Forecast-guided evolutionary search over CUDA kernels (workbench and CLI)")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Kerncast maintainers <kerncast@invalid>")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# One package holding both the default component and the CUDA bundle: a component named here is installed even
# though EXCLUDE_FROM_ALL keeps it out of a plain install.
set(CPACK_INSTALL_CMAKE_PROJECTS
    "${CMAKE_BINARY_DIR};Kerncast;Unspecified;/;${CMAKE_BINARY_DIR};Kerncast;cuda_runtime;/")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# Dependencies on Debian's libraries (Qt 6, QScintilla, QCustomPlot, SQLite, libcurl, XGBoost) come from
# dpkg-shlibdeps; the bundled CUDA libraries are the package's own.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Qt's own texts (standard buttons, file dialogs) in the interface's language: not a library, so shlibdeps misses it.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS qt6-translations-l10n)
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
include(CPack)
