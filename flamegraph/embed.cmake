# embed.cmake — `cmake -DIN=file -DOUT=file.c -DSYM=name -P embed.cmake` writes a C file
# holding IN's bytes as `const unsigned char SYM[]` (NUL-terminated) and `SYM_len`, so the
# library needs no file at run time (the HTML viewer template, the SVG script).
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n2)
math(EXPR n "${n2} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUT}.tmp"
  "/* Generated from ${IN} by flamegraph/embed.cmake. Do not edit. */\n"
  "#include <stddef.h>\n"
  "const unsigned char ${SYM}[] = {\n${bytes}0x00};\n"
  "const size_t ${SYM}_len = ${n};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
