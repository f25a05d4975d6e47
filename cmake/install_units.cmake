# Installs the systemd units of docs/deploy/ (run by `cmake --install`, from
# the install(CODE) in CMakeLists.txt). The units in docs/ start the binary
# as /usr/local/bin/barberia, where the default prefix puts it; each copy
# installed names the binary where this installation put it instead, so that
# `--prefix /usr` gives ExecStart=/usr/bin/barberia.
#
# In: BARBERIA_UNIT_SOURCES (the unit files), BARBERIA_UNIT_STAGE (a build
# folder to write the rewritten copies in), BARBERIA_UNIT_DIR and
# BARBERIA_BINDIR (relative to CMAKE_INSTALL_PREFIX, or absolute).
# file(INSTALL) adds DESTDIR and records the files in install_manifest.txt.

set(documented "/usr/local/bin/barberia")

if(IS_ABSOLUTE "${BARBERIA_BINDIR}")
  set(bin "${BARBERIA_BINDIR}/barberia")
else()
  set(bin "${CMAKE_INSTALL_PREFIX}/${BARBERIA_BINDIR}/barberia")
endif()
if(IS_ABSOLUTE "${BARBERIA_UNIT_DIR}")
  set(unit_dir "${BARBERIA_UNIT_DIR}")
else()
  set(unit_dir "${CMAKE_INSTALL_PREFIX}/${BARBERIA_UNIT_DIR}")
endif()

file(MAKE_DIRECTORY "${BARBERIA_UNIT_STAGE}")
set(staged "")
foreach(src IN LISTS BARBERIA_UNIT_SOURCES)
  file(READ "${src}" text)
  string(FIND "${text}" "ExecStart=${documented} " at)
  if(at EQUAL -1) # the rewrite below would silently do nothing
    message(FATAL_ERROR "${src}: no 'ExecStart=${documented} ' line to point at ${bin}")
  endif()
  string(REPLACE "${documented}" "${bin}" text "${text}")
  get_filename_component(name "${src}" NAME)
  file(WRITE "${BARBERIA_UNIT_STAGE}/${name}" "${text}")
  list(APPEND staged "${BARBERIA_UNIT_STAGE}/${name}")
endforeach()

file(INSTALL DESTINATION "${unit_dir}" TYPE FILE
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
     FILES ${staged})
