# One static library per layer under src/: ct_<layer>, built from every .cpp in the folder, linking the layers
# and packages it names. A layer's own CMakeLists.txt calls ct_layer(); the folder says what a file may touch.
function(ct_layer name)
  cmake_parse_arguments(ARG "RECURSE" "" "DEPS" ${ARGN})
  if(ARG_RECURSE)  # a layer made of sub-folders (tasks/: one per task; model/heads/)
    file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  else()
    file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  endif()
  if(srcs)
    add_library(ct_${name} STATIC ${srcs})
    target_include_directories(ct_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(ct_${name} PUBLIC ${ARG_DEPS})
  else()
    add_library(ct_${name} INTERFACE)
    target_include_directories(ct_${name} INTERFACE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(ct_${name} INTERFACE ${ARG_DEPS})
  endif()
endfunction()

# One GoogleTest executable per layer, ct_<layer>_tests, from every *_test.cpp in tests/<layer>/ (a task folder
# of tests/tasks/ gets its own, linking LIB, the layer's library).
# Tests run with the test folder's data path in CORETRAIN_TEST_DATA and the built binary in CORETRAIN_BIN.
function(ct_layer_tests name)
  cmake_parse_arguments(ARG "" "LIB" "DEPS" ${ARGN})
  if(NOT ARG_LIB)
    set(ARG_LIB ct_${name})
  endif()
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cpp)
  if(NOT srcs)
    return()
  endif()
  add_executable(ct_${name}_tests ${srcs})
  target_link_libraries(ct_${name}_tests PRIVATE ${ARG_LIB} ${ARG_DEPS} ct_test_main GTest::gmock)
  target_compile_definitions(ct_${name}_tests PRIVATE
    CORETRAIN_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data"
    CORETRAIN_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    CORETRAIN_BIN="$<TARGET_FILE:coretrain>")
  add_dependencies(ct_${name}_tests coretrain)
  gtest_discover_tests(ct_${name}_tests DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)
endfunction()
