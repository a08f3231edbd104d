# Runs the native app under Xvfb for 40 frames, dumps its framebuffer and checks it is not blank.
get_filename_component(dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${dir})
file(REMOVE ${OUT})
execute_process(COMMAND ${XVFB_RUN} -a -s "-screen 0 1600x1000x24" ${APP} --frames 40 --size 1440x900
                        --screenshot ${OUT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "megacluster-app exited with ${rc}")
endif()
execute_process(COMMAND ${CHECK} ${OUT} RESULT_VARIABLE rc2)
if(NOT rc2 EQUAL 0)
  message(FATAL_ERROR "the native screenshot ${OUT} looks blank")
endif()
