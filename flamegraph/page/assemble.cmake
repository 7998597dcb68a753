# assemble.cmake — `cmake -DHTML=viewer.html "-DSCRIPTS=model.js|viewer.js" -DOUT=page.html
# -P assemble.cmake` writes the viewer page with its one /*@FG_SCRIPT@*/ line replaced by the
# scripts, in order: one self-contained file, which embed.cmake then embeds into the library.
# Hazard: the scripts go inside a <script> element, so a "</script" in one would end it early
# (and cut the page): refused here, at build time.
file(READ "${HTML}" page)
string(FIND "${page}" "/*@FG_SCRIPT@*/" at)
string(FIND "${page}" "/*@FG_SCRIPT@*/" last REVERSE)
if(at LESS 0 OR NOT at EQUAL last)
  message(FATAL_ERROR "${HTML}: needs exactly one /*@FG_SCRIPT@*/ line")
endif()
string(REPLACE "|" ";" scripts "${SCRIPTS}")
set(code "")
foreach(js IN LISTS scripts)
  file(READ "${js}" text)
  string(TOLOWER "${text}" lower)
  string(FIND "${lower}" "</script" bad)
  if(bad GREATER -1)
    message(FATAL_ERROR "${js}: holds \"</script\", which would end the page's <script> element")
  endif()
  string(APPEND code "${text}")
endforeach()
string(REPLACE "/*@FG_SCRIPT@*/" "${code}" page "${page}")
file(WRITE "${OUT}.tmp" "${page}")
file(RENAME "${OUT}.tmp" "${OUT}")
