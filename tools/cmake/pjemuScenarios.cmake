# pjemu_add_scenarios(DIRECTORY dir [IMAGE_MAP file] [LABELS label...] [WORKING_DIRECTORY dir]
#                     [PREFIX text] [TIMEOUT seconds])
#
# Registers one ctest test per dir/*.yaml scenario file, named "<PREFIX><file stem>" (PREFIX
# defaults to "scenario: "), each running `pjemu scenario run <file>` with a JUnit file and an
# HTML report in ${CMAKE_CURRENT_BINARY_DIR}/scenario-reports. Labels: `scenario`, LABELS, and
# `slow` for files with `time: real`. Relative paths inside a scenario (fixtures, image maps)
# resolve against WORKING_DIRECTORY (default: the calling CMakeLists.txt's folder). IMAGE_MAP
# is used by scenarios that name none. Adding a scenario is adding a file (CONFIGURE_DEPENDS).
#
# The pjemu executable: PJEMU_EXECUTABLE (a path, or a target name inside pjemu's own build).
# Shared by pjemu's build (tests/) and the installed package (pjemuConfig.cmake).
function(pjemu_add_scenarios)
  cmake_parse_arguments(ARG "" "DIRECTORY;IMAGE_MAP;WORKING_DIRECTORY;PREFIX;TIMEOUT" "LABELS"
                        ${ARGN})
  if(NOT ARG_DIRECTORY)
    message(FATAL_ERROR "pjemu_add_scenarios: DIRECTORY is required")
  endif()
  if(NOT PJEMU_EXECUTABLE)
    message(FATAL_ERROR "pjemu_add_scenarios: PJEMU_EXECUTABLE is not set")
  endif()
  get_filename_component(_dir "${ARG_DIRECTORY}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT ARG_WORKING_DIRECTORY)
    set(ARG_WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}")
  endif()
  if(NOT DEFINED ARG_PREFIX)
    set(ARG_PREFIX "scenario: ")
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  set(_image_map_args "")
  if(ARG_IMAGE_MAP)
    get_filename_component(_map "${ARG_IMAGE_MAP}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    set(_image_map_args --image-map "${_map}")
  endif()
  set(_reports "${CMAKE_CURRENT_BINARY_DIR}/scenario-reports")
  file(GLOB _files CONFIGURE_DEPENDS "${_dir}/*.yaml")
  list(SORT _files)
  foreach(_file IN LISTS _files)
    get_filename_component(_name "${_file}" NAME_WE)
    set(_labels scenario ${ARG_LABELS})
    file(STRINGS "${_file}" _real REGEX "^[ ]*time:[ ]*real")
    if(_real)
      list(APPEND _labels slow)
    endif()
    add_test(NAME "${ARG_PREFIX}${_name}"
             COMMAND ${PJEMU_EXECUTABLE} scenario run "${_file}" --output-dir "${_reports}"
                     --junit "${_reports}/${_name}.xml" ${_image_map_args}
             WORKING_DIRECTORY "${ARG_WORKING_DIRECTORY}")
    set_tests_properties("${ARG_PREFIX}${_name}" PROPERTIES LABELS "${_labels}"
                                                            TIMEOUT ${ARG_TIMEOUT})
  endforeach()
endfunction()
