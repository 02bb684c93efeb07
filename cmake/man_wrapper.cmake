# Writes OUT: a script that runs PROGRAM [SUB] with its arguments under the
# name NAME's command is typed as ("imgsmith", or "imgsmith analyze"), for
# help2man, which runs one program with --help.
if(SUB)
  set(invocation "exec -a imgsmith \"${PROGRAM}\" ${SUB} \"$@\"")
else()
  get_filename_component(base ${PROGRAM} NAME)
  set(invocation "exec -a ${base} \"${PROGRAM}\" \"$@\"")
endif()
file(WRITE ${OUT} "#!/bin/bash\n${invocation}\n")
file(CHMOD ${OUT} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ
     WORLD_EXECUTE)
