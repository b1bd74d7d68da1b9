# Writes the bytes of IN as a C array named NAME into OUT, 16-byte aligned
# (the driver reads a module image's headers in place).
#   cmake -DIN=file -DOUT=file.c -DNAME=symbol -P EmbedBinary.cmake
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp"
  "/* Generated from ${IN} by EmbedBinary.cmake. */\n"
  "_Alignas(16) const unsigned char ${NAME}[] = {\n${bytes}\n};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
